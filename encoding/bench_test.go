package sandboxauditencoding

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Each benchmark runs the extension and, as its peer in the same run, the
// kafka exporter's and receiver's default encoding (otlp_proto) on the same
// data: 1,000 sandbox spans (2,000 events) in 10 sessions per operation.
const benchSessions, benchOps = 10, 100

func reportEvents(b *testing.B, perOp int) {
	b.ReportMetric(float64(b.N*perOp)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkMarshalTraces(b *testing.B) {
	td := sandboxTraces(benchSessions, benchOps)
	events := 2 * benchSessions * benchOps
	b.Run("sandboxaudit_encoding", func(b *testing.B) {
		ext := newExt(b, &Config{}, nil)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ext.MarshalTraces(td); err != nil {
				b.Fatal(err)
			}
		}
		reportEvents(b, events)
	})
	b.Run("otlp_proto", func(b *testing.B) {
		var m ptrace.ProtoMarshaler
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.MarshalTraces(td); err != nil {
				b.Fatal(err)
			}
		}
		reportEvents(b, events)
	})
}

// benchLogs is the audit log records of the benchmark spans, as
// UnmarshalLogs (and the sandboxaudit receiver) make them, and their lines.
func benchLogs(b *testing.B) (plog.Logs, []byte) {
	ext := newExt(b, &Config{}, nil)
	lines, err := ext.MarshalTraces(sandboxTraces(benchSessions, benchOps))
	if err != nil {
		b.Fatal(err)
	}
	ld, err := ext.UnmarshalLogs(lines)
	if err != nil {
		b.Fatal(err)
	}
	return ld, lines
}

func BenchmarkMarshalLogs(b *testing.B) {
	ld, _ := benchLogs(b)
	events := ld.LogRecordCount()
	b.Run("sandboxaudit_encoding", func(b *testing.B) {
		ext := newExt(b, &Config{}, nil)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ext.MarshalLogs(ld); err != nil {
				b.Fatal(err)
			}
		}
		reportEvents(b, events)
	})
	b.Run("otlp_proto", func(b *testing.B) {
		var m plog.ProtoMarshaler
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.MarshalLogs(ld); err != nil {
				b.Fatal(err)
			}
		}
		reportEvents(b, events)
	})
}

func BenchmarkUnmarshalLogs(b *testing.B) {
	ld, lines := benchLogs(b)
	events := ld.LogRecordCount()
	b.Run("sandboxaudit_encoding", func(b *testing.B) {
		ext := newExt(b, &Config{}, nil)
		b.SetBytes(int64(len(lines)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ext.UnmarshalLogs(lines); err != nil {
				b.Fatal(err)
			}
		}
		reportEvents(b, events)
	})
	b.Run("otlp_proto", func(b *testing.B) {
		var m plog.ProtoMarshaler
		msg, err := m.MarshalLogs(ld)
		if err != nil {
			b.Fatal(err)
		}
		var u plog.ProtoUnmarshaler
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := u.UnmarshalLogs(msg); err != nil {
				b.Fatal(err)
			}
		}
		reportEvents(b, events)
	})
}

func BenchmarkUnmarshalTraces(b *testing.B) {
	td := sandboxTraces(benchSessions, benchOps)
	events := 2 * benchSessions * benchOps
	b.Run("sandboxaudit_encoding", func(b *testing.B) {
		ext := newExt(b, &Config{}, nil)
		lines, err := ext.MarshalTraces(td)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(lines)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ext.UnmarshalTraces(lines); err != nil {
				b.Fatal(err)
			}
		}
		reportEvents(b, events)
	})
	b.Run("otlp_proto", func(b *testing.B) {
		var m ptrace.ProtoMarshaler
		msg, err := m.MarshalTraces(td)
		if err != nil {
			b.Fatal(err)
		}
		var u ptrace.ProtoUnmarshaler
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := u.UnmarshalTraces(msg); err != nil {
				b.Fatal(err)
			}
		}
		reportEvents(b, events)
	})
}
