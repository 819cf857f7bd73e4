package sandboxauditprocessor

import (
	"bytes"
	"context"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/logmap"
)

// benchLogs is 100 exec finish records, each with 4 KiB of raw stdout and
// stderr, and 100 other records: benchTraces as log records.
func benchLogs(b *testing.B) plog.Logs {
	finish, err := auditevent.DecodeString(`{"version":1,` + logIDs + `,"phase":"finish","data":{"exit_code":0},"ok":true,"duration_ms":1.5,` +
		`"error_type":null,"error_code":null,"error_message":null,"error_retryable":null,"stdout":null,"stderr":null}`)
	if err != nil {
		b.Fatal(err)
	}
	finish.StdoutBytes = bytes.Repeat([]byte("output line\n"), 340)
	finish.StderrBytes = finish.StdoutBytes
	evs := make([]auditevent.Event, 100)
	for i := range evs {
		evs[i] = finish
	}
	ld := logmap.EventsToLogs(evs, "bench")
	records := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	for range 100 {
		records.AppendEmpty().Body().SetStr("GET /health 200")
	}
	return ld
}

// BenchmarkProcessLogs is BenchmarkProcessTraces for a 200-record batch.
func BenchmarkProcessLogs(b *testing.B) {
	benchProcessLogs(b, benchLogs(b))
}

// benchProcessLogs runs the processor over a copy of src per iteration,
// under each of benchConfigs.
func benchProcessLogs(b *testing.B, src plog.Logs) {
	for name, cfg := range benchConfigs() {
		b.Run(name, func(b *testing.B) {
			p := benchPolicy(b, cfg)
			ld := plog.NewLogs()
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				src.CopyTo(ld)
				b.StartTimer()
				if _, err := p.processLogs(context.Background(), ld); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchJSONLogs is 200 structured application log records, JSON objects
// that are not events: 100 plain and 100 governed by the policy (they name
// a sandbox session and operation), whose bodies are redacted.
func benchJSONLogs() plog.Logs {
	const body = `{"level":"info","time":"2026-03-14T15:09:26.535Z","logger":"http","msg":"request done",` +
		`"method":"GET","path":"/health","status":200,"duration_ms":1.25,"request_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e"}`
	ld := plog.NewLogs()
	records := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for range 100 {
		records.AppendEmpty().Body().SetStr(body)
		lr := records.AppendEmpty()
		lr.Body().SetStr(body)
		putSandbox(lr.Attributes(), "exec")
	}
	return ld
}

// BenchmarkProcessJSONLogs is BenchmarkProcessLogs for benchJSONLogs: the
// cost of reading bodies that are JSON but not events.
func BenchmarkProcessJSONLogs(b *testing.B) {
	benchProcessLogs(b, benchJSONLogs())
}
