package spool

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// linesOf returns n lines of about size bytes each.
func linesOf(n, size int) []byte {
	var b bytes.Buffer
	for i := range n {
		head := fmt.Sprintf("{\"seq\":%d,\"pad\":\"", i)
		b.WriteString(head)
		b.WriteString(strings.Repeat("a", size-len(head)-3))
		b.WriteString("\"}\n")
	}
	return b.Bytes()
}

func BenchmarkAppend(b *testing.B) {
	s, err := Open(context.Background(), Options{Path: filepath.Join(b.TempDir(), "spool.jsonl")})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	batch := linesOf(1000, 400)
	ctx := context.Background()
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Append(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkReplay replays 20,000 audit event lines, with and without
// the canonical check that keeps damaged lines from being sent.
func BenchmarkReplay(b *testing.B) {
	batch := eventLines(b, 1, 1000)
	for name, check := range map[string]func([]byte) error{"check=none": nil, "check=canonical": CanonicalEvent} {
		b.Run(name, func(b *testing.B) { benchmarkReplay(b, batch, check) })
	}
}

func benchmarkReplay(b *testing.B, batch []byte, check func([]byte) error) {
	s, err := Open(context.Background(), Options{Path: filepath.Join(b.TempDir(), "spool.jsonl"), Check: check})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	ctx := context.Background()
	const batches = 20
	send := func(context.Context, []byte, int) error { return nil }
	b.SetBytes(int64(len(batch) * batches))
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for range batches {
			if err := s.Append(ctx, batch); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		n, err := s.Replay(ctx, 1000, 1<<20, send)
		if err != nil || n != 1000*batches {
			b.Fatalf("replayed %d: %v", n, err)
		}
	}
	b.ReportMetric(float64(b.N*1000*batches)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkAppendConcurrent is many pushes spooling one line each at once,
// as single events do while the HTTP endpoint is down: appends that queue
// behind a sync share the next one.
func BenchmarkAppendConcurrent(b *testing.B) {
	line := linesOf(1, 400)
	for _, perCPU := range []int{1, 8} {
		b.Run(fmt.Sprintf("writers-per-cpu=%d", perCPU), func(b *testing.B) {
			s, err := Open(context.Background(), Options{Path: filepath.Join(b.TempDir(), "spool.jsonl")})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			b.SetParallelism(perCPU)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := s.Append(context.Background(), line); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}
