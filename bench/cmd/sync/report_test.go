package main

import (
	"testing"
	"time"
)

func TestPercentiles(t *testing.T) {
	var r run
	for i := 100; i >= 1; i-- { // 1..100 ms, given out of order
		r.durations = append(r.durations, time.Duration(i)*time.Millisecond)
	}
	if p50, p99 := r.p50(), r.p99(); p50 != 51 || p99 != 100 {
		t.Fatalf("p50 %v p99 %v, want 51 and 100 (nearest rank above)", p50, p99)
	}
	if r.durations[0] != 100*time.Millisecond {
		t.Fatal("pct sorted the run's own durations")
	}
}

func TestSpanGivesMedianAndRange(t *testing.T) {
	if got := span([]float64{0.5, 0.2, 0.9}); got != "0.50 (0.20–0.90)" {
		t.Fatalf("got %q", got)
	}
	if got := span(nil); got != "-" {
		t.Fatalf("got %q", got)
	}
}
