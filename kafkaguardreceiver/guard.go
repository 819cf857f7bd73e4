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

// encodingGuard is a kafka receiver checked before it starts.
type encodingGuard struct {
	component.Component
	signal, encoding string
}

func (g *encodingGuard) Start(ctx context.Context, host component.Host) error {
	if err := checkEncoding(g.signal, g.encoding, host); err != nil {
		return err
	}
	return g.Component.Start(ctx, host)
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
