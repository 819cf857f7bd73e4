package auditevent_test

import (
	"testing"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// A typical exec operation as the Python HttpProxySink posts it
// (pydantic model_dump_json: model field order, no spaces).
const (
	benchStartBody  = `{"version":1,"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","ts":"2026-03-14T15:09:26.535897Z","session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","seq":1,"op":"exec","phase":"start","span_id":"sandbox_op_0af7651916cd43dd8448eb211c80319c","parent_span_id":null,"trace_id":null,"data":{"command":["sh","-lc","ls -la /workspace"],"timeout_s":30.0,"shell":true,"user":null}}`
	benchFinishBody = `{"version":1,"event_id":"1c9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","ts":"2026-03-14T15:09:26.786022Z","session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","seq":2,"op":"exec","phase":"finish","span_id":"sandbox_op_0af7651916cd43dd8448eb211c80319c","parent_span_id":null,"trace_id":null,"data":{"command":["sh","-lc","ls -la /workspace"],"timeout_s":30.0,"shell":true,"user":null,"exit_code":0},"ok":true,"duration_ms":250.125,"error_code":null,"error_type":null,"error_message":null,"error_retryable":null,"stdout":null,"stderr":null}`
)

func benchPair(b *testing.B) [2]auditevent.Event {
	b.Helper()
	var pair [2]auditevent.Event
	for i, body := range []string{benchStartBody, benchFinishBody} {
		ev, err := auditevent.Decode([]byte(body))
		if err != nil {
			b.Fatal(err)
		}
		pair[i] = ev
	}
	return pair
}

func reportEvents(b *testing.B, perOp int) {
	b.ReportMetric(float64(b.N*perOp)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkAppendLine encodes an exec start+finish pair into a reused buffer.
func BenchmarkAppendLine(b *testing.B) {
	pair := benchPair(b)
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		buf = auditevent.AppendLine(buf[:0], &pair[0])
		buf = auditevent.AppendLine(buf, &pair[1])
	}
	reportEvents(b, 2)
}

// BenchmarkDecode decodes and validates the two HttpProxySink bodies.
func BenchmarkDecode(b *testing.B) {
	bodies := [][]byte{[]byte(benchStartBody), []byte(benchFinishBody)}
	var ev auditevent.Event
	opts := auditevent.DecodeOptions{}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for _, body := range bodies {
			if err := opts.DecodeInto(body, &ev); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportEvents(b, 2)
}

// BenchmarkPolicyApply resolves and applies an exec-output policy to a
// finish event carrying raw output, as a sink does per event.
func BenchmarkPolicyApply(b *testing.B) {
	pair := benchPair(b)
	fin := pair[1]
	fin.StdoutBytes = []byte("total 8\ndrwxr-xr-x 2 sandbox sandbox 4096 Mar 14 15:09 .\n")
	fin.StderrBytes = []byte{}
	set := auditevent.PolicySet{ByOp: map[string]auditevent.PolicyOverride{"exec": {IncludeExecOutput: auditevent.Ptr(true)}}}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		out := set.Resolve(fin.Op).Apply(&fin)
		if out.Stdout == nil {
			b.Fatal("stdout not included")
		}
	}
	reportEvents(b, 1)
}

// BenchmarkPolicyRedact is the default policy on the same event: the
// common, redacting case.
func BenchmarkPolicyRedact(b *testing.B) {
	pair := benchPair(b)
	fin := pair[1]
	fin.StdoutBytes = []byte("secret output")
	p := auditevent.DefaultPolicy()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		out := p.Apply(&fin)
		if out.Stdout != nil {
			b.Fatal("stdout not redacted")
		}
	}
	reportEvents(b, 1)
}
