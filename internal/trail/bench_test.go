package trail

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// benchTrail writes a trail of n lines (n/2 operations over 100 sessions)
// once per benchmark.
func benchTrail(b *testing.B, lines int) string {
	b.Helper()
	if p := os.Getenv("SANDBOXAUDIT_BENCH_FILE"); p != "" {
		// A trail written before (TestGenerate), for profiling the read alone.
		fi, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(fi.Size())
		return p
	}
	p := filepath.Join(b.TempDir(), "events.jsonl")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	size, err := genTrail(f, 100, lines/2)
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	return p
}

func BenchmarkReadOpsTable(b *testing.B) { benchReadOps(b, false) }
func BenchmarkReadOpsLines(b *testing.B) { benchReadOps(b, true) }

func benchReadOps(b *testing.B, keepLines bool) {
	p := benchTrail(b, benchLines())
	b.ReportAllocs()
	for b.Loop() {
		st, err := ReadOps(context.Background(), []string{p}, Options{KeepLines: keepLines, TempDir: b.TempDir()}, func(*Op) error { return nil })
		if err != nil || (os.Getenv("SANDBOXAUDIT_BENCH_FILE") == "" && st.Ops != int64(benchLines()/2)) {
			b.Fatal(err, st)
		}
	}
	b.ReportMetric(float64(benchLines())*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

func BenchmarkReadSessions(b *testing.B) {
	p := benchTrail(b, benchLines())
	b.ReportAllocs()
	for b.Loop() {
		list, _, err := ReadSessions(context.Background(), []string{p}, Options{})
		if err != nil || (os.Getenv("SANDBOXAUDIT_BENCH_FILE") == "" && len(list) != 100) {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchLines())*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// benchLines is the trail's size: SANDBOXAUDIT_BENCH_LINES, else 200,000
// (the figures quoted in docs use 1,000,000).
func benchLines() int {
	if n, err := strconv.Atoi(os.Getenv("SANDBOXAUDIT_BENCH_LINES")); err == nil && n > 0 {
		return n
	}
	return 200_000
}
