package kafkaguardreceiver

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// builtinEncodings are the kafka receiver's own encodings of a signal
// (v0.165.1); any other name must be an encoding extension.
func builtinEncodings(signal string) []string {
	switch signal {
	case "traces":
		return []string{"otlp_proto", "otlp_json", "jaeger_proto", "jaeger_json", "zipkin_proto", "zipkin_json", "zipkin_thrift"}
	case "logs":
		return []string{"otlp_proto", "otlp_json", "raw", "json", "azure_resource_logs", "text"}
	}
	return []string{"otlp_proto", "otlp_json"}
}

// encodingGuard is a kafka receiver checked before it starts, and shut
// down at once if its start fails.
type encodingGuard struct {
	component.Component
	signal, encoding string
	failed           bool // Start failed and the receiver is already shut down
}

func (g *encodingGuard) Start(ctx context.Context, host component.Host) error {
	if err := checkEncoding(g.signal, g.encoding, host); err != nil {
		return err
	}
	if err := g.Component.Start(ctx, host); err != nil {
		g.failed = true
		g.release()
		return err
	}
	return nil
}

func (g *encodingGuard) Shutdown(ctx context.Context) error {
	if g.failed {
		return nil
	}
	return g.Component.Shutdown(ctx)
}

// release shuts down a receiver whose Start failed once it had begun (its
// client could not be built: a TLS file missing, a group setting refused).
// The contrib receiver's Shutdown then waits for a consume loop that never
// ran, until its context ends, and the collector's has no deadline: so it
// gets a context that has already ended.
func (g *encodingGuard) release() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = g.Component.Shutdown(ctx)
}

// checkTopics refuses a signal that names no topic: the receiver would
// run and consume nothing, without a word.
func checkTopics(signal string, topics []string) error {
	if len(topics) == 0 {
		return fmt.Errorf("kafka receiver: %s::topics: must name at least one topic", signal)
	}
	for i, t := range topics {
		if strings.TrimSpace(t) == "" {
			return fmt.Errorf("kafka receiver: %s::topics::%d: must not be empty", signal, i)
		}
	}
	return nil
}

func checkEncoding(signal, encoding string, host component.Host) error {
	if slices.Contains(builtinEncodings(signal), encoding) || signal == "logs" && strings.HasPrefix(encoding, "text_") {
		return nil
	}
	var id component.ID
	if err := id.UnmarshalText([]byte(encoding)); err == nil {
		if ext, ok := host.GetExtensions()[id]; ok {
			if unmarshals(ext, signal) {
				return nil
			}
			return fmt.Errorf("kafka receiver: %s::encoding: the extension %q does not unmarshal %s", signal, encoding, signal)
		}
	}
	return fmt.Errorf("kafka receiver: %s::encoding: %q is neither one of its own encodings (%s) nor an extension in service::extensions",
		signal, encoding, strings.Join(builtinEncodings(signal), ", "))
}

// unmarshals reports whether ext can be the signal's encoding.
func unmarshals(ext component.Component, signal string) bool {
	var ok bool
	switch signal {
	case "traces":
		_, ok = ext.(ptrace.Unmarshaler)
	case "logs":
		_, ok = ext.(plog.Unmarshaler)
	case "metrics":
		_, ok = ext.(pmetric.Unmarshaler)
	case "profiles":
		_, ok = ext.(pprofile.Unmarshaler)
	}
	return ok
}
