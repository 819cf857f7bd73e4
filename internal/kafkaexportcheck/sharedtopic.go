package kafkaexportcheck

import (
	"fmt"

	"go.opentelemetry.io/collector/component"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/kafkaexporter"
)

// checkSharedTopic refuses a signal whose encoding is not one of the known
// extension types but whose topic another signal fills with one of them:
// a collector reading that topic with the extension refuses every message
// of the first signal, and skips it (an edge that sets logs to
// sandboxaudit_encoding and leaves traces at otlp_proto on the same topic
// loses every span's lines while it answers success).
func checkSharedTopic(id component.ID, signal string, cfg *kafkaexporter.Config, known map[component.Type]bool) error {
	sections := map[string]kafkaexporter.SignalConfig{
		"logs": cfg.Logs, "traces": cfg.Traces, "metrics": cfg.Metrics, "profiles": cfg.Profiles,
	}
	own := sections[signal]
	if _, ok := knownExtension(own.Encoding, known); ok {
		return nil
	}
	for _, other := range []string{"logs", "traces", "metrics", "profiles"} {
		s := sections[other]
		if _, ok := knownExtension(s.Encoding, known); ok && other != signal && s.Topic == own.Topic {
			return fmt.Errorf("exporters::%s::%s::encoding: %q writes to topic %q, where %s writes %s lines: "+
				"a collector reading the topic with the extension refuses every such message",
				id, signal, own.Encoding, own.Topic, other, s.Encoding)
		}
	}
	return nil
}

// knownExtension is the extension encoding names, and whether it is of a
// known type.
func knownExtension(encoding string, known map[component.Type]bool) (component.ID, bool) {
	var ext component.ID
	return ext, ext.UnmarshalText([]byte(encoding)) == nil && known[ext.Type()]
}
