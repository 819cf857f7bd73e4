package cli

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// benchInput is n operations of one session as canonical lines.
func benchInput(n int) string {
	var b strings.Builder
	for i := range n {
		s, f := op(sessionA, "exec", fmt.Sprintf("span-%d", i), int64(2*i+1), int64(2*i+2))
		b.WriteString(canonLines(s, f))
	}
	return b.String()
}

func BenchmarkCanon(b *testing.B) {
	in := benchInput(1000)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := canon(context.Background(), strings.NewReader(in), io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	in := benchInput(1000)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		v := newVerifier(io.Discard, verifyOptions{})
		if err := v.verifyReader(context.Background(), "bench", strings.NewReader(in)); err != nil {
			b.Fatal(err)
		}
		if sum := v.finish(); sum.Problems != 0 {
			b.Fatalf("problems: %+v", sum)
		}
	}
}

// BenchmarkVerifyRetained reports the memory verify keeps per event once a
// long session has been read: near zero, as seqs fold into ranges and
// complete spans are dropped.
func BenchmarkVerifyRetained(b *testing.B) {
	in := benchInput(100_000)
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		v := newVerifier(io.Discard, verifyOptions{})
		if err := v.verifyReader(context.Background(), "bench", strings.NewReader(in)); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(v.sum.Events), "retained-B/event")
		runtime.KeepAlive(v)
	}
}
