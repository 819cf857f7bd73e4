package startupline

import (
	"slices"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/kafkaexporter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/kafkareceiver"

	sandboxauditencoding "github.com/sandboxaudit/sandboxaudit/encoding"
)

// kafkaOutput names the topics a kafka exporter writes audit lines to, for
// the signals it is used for: "kafka topic T at BROKERS". It is "" for
// another exporter, or one whose encoding is not sandboxaudit_encoding.
func kafkaOutput(conf *confmap.Conf, id component.ID, signals map[string]bool) string {
	f := kafkaexporter.NewFactory()
	cfg := f.CreateDefaultConfig().(*kafkaexporter.Config)
	if id.Type() != f.Type() || !load(conf, "exporters", id, cfg) {
		return ""
	}
	var topics, chosen []string
	for signal, section := range map[string]kafkaexporter.SignalConfig{"logs": cfg.Logs, "traces": cfg.Traces} {
		if signals[signal] && sandboxauditencoding.Names(section.Encoding) {
			topics = append(topics, section.Topic)
			if section.TopicFromMetadataKey != "" {
				chosen = append(chosen, "metadata key "+section.TopicFromMetadataKey)
			}
		}
	}
	if len(topics) == 0 {
		return ""
	}
	// In the exporter's order: client metadata, then a resource attribute.
	slices.Sort(chosen)
	chosen = slices.Compact(chosen)
	if cfg.TopicFromAttribute != "" {
		chosen = append(chosen, "resource attribute "+cfg.TopicFromAttribute)
	}
	label := named(topicsLabel(topics), id)
	if len(chosen) > 0 {
		// The exporter sends a batch to the topic its data names, if any.
		label += ", or the one a batch names (" + strings.Join(chosen, ", ") + "),"
	}
	return label + " at " + strings.Join(cfg.ClientConfig.Brokers, ",")
}

// kafkaIntake names the topics a kafka receiver consumes for the signals
// it is used for, its brokers and its group. It is "" for another
// receiver.
func kafkaIntake(conf *confmap.Conf, id component.ID, signals map[string]bool) string {
	f := kafkareceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*kafkareceiver.Config)
	if id.Type() != f.Type() || !load(conf, "receivers", id, cfg) {
		return ""
	}
	var topics []string
	for signal, section := range map[string]kafkareceiver.TopicEncodingConfig{
		"logs": cfg.Logs, "traces": cfg.Traces, "metrics": cfg.Metrics, "profiles": cfg.Profiles,
	} {
		if signals[signal] {
			topics = append(topics, section.Topics...)
		}
	}
	if len(topics) == 0 {
		return ""
	}
	return named(topicsLabel(topics), id) + " at " + strings.Join(cfg.ClientConfig.Brokers, ",") + " (group " + cfg.ConsumerConfig.GroupID + ")"
}

// topicsLabel is "kafka topic T" or "kafka topics T1,T2", each once, sorted.
func topicsLabel(topics []string) string {
	slices.Sort(topics)
	topics = slices.Compact(topics)
	if len(topics) == 1 {
		return "kafka topic " + topics[0]
	}
	return "kafka topics " + strings.Join(topics, ",")
}
