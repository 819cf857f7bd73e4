package sandboxauditprocessor

import (
	"bytes"
	"context"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/processor/internal/metadata"
)

// benchTraces is 100 sandbox exec spans, each with 4 KiB of raw stdout
// and stderr, and 100 other spans.
func benchTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	out := bytes.Repeat([]byte("output line\n"), 340)
	for range 100 {
		a := spans.AppendEmpty().Attributes()
		a.PutStr("sandbox.operation", "exec")
		a.PutStr("sandbox.session.id", "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b")
		a.PutStr("sandbox.start_data", `{"command":["make"],"shell":false,"timeout_s":null,"user":null}`)
		a.PutEmptyBytes("sandbox.exec.stdout_bytes").FromRaw(out)
		a.PutEmptyBytes("sandbox.exec.stderr_bytes").FromRaw(out)
		spans.AppendEmpty().Attributes().PutStr("http.request.method", "GET")
	}
	return td
}

// BenchmarkProcessTraces compares the default policy (remove raw output)
// with opting in (decode and cut to 8000 code points), per 200-span batch.
func BenchmarkProcessTraces(b *testing.B) {
	for name, cfg := range benchConfigs() {
		b.Run(name, func(b *testing.B) {
			p := benchPolicy(b, cfg)
			src := benchTraces()
			td := ptrace.NewTraces()
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				src.CopyTo(td)
				b.StartTimer()
				if _, err := p.processTraces(context.Background(), td); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchConfigs are the policies the processor benchmarks compare: the
// default (remove raw output) and opting in to output, with and without
// redaction.
func benchConfigs() map[string]*Config {
	include := true
	return map[string]*Config{
		"default":                   {},
		"include_output":            {PayloadPolicy: policyWithOutput(&include)},
		"include_output/redact=off": {PayloadPolicy: redactOff(policyWithOutput(&include))},
	}
}

// benchPolicy resolves cfg with no-op telemetry.
func benchPolicy(b *testing.B, cfg *Config) *spanPolicy {
	tb, err := metadata.NewTelemetryBuilder(componenttest.NewNopTelemetrySettings())
	if err != nil {
		b.Fatal(err)
	}
	p, err := newSpanPolicy(cfg, tb)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func policyWithOutput(include *bool) (o auditevent.PolicyOverride) {
	o.IncludeExecOutput = include
	return o
}

func redactOff(p auditevent.PolicyOverride) auditevent.PolicyOverride {
	p.Redact.Enabled = auditevent.Ptr(false)
	return p
}
