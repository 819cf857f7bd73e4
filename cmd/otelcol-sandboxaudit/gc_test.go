package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// current reads the runtime's GOGC and memory limit without changing them.
func current() (int, int64) {
	pct := debug.SetGCPercent(100)
	debug.SetGCPercent(pct)
	return pct, debug.SetMemoryLimit(-1)
}

func restoreGC(t *testing.T) {
	pct, limit := current()
	t.Cleanup(func() {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(limit)
	})
}

func TestGCDefaultsWhenTheEnvironmentSetsNone(t *testing.T) {
	restoreGC(t)
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	gc, mem := applyGCDefaults(func(string) (string, bool) { return "", false })
	pct, limit := current()
	if !gc || !mem || pct != 400 || limit != 512<<20 {
		t.Fatalf("set %v %v: GOGC %d, limit %d; want 400 and %d", gc, mem, pct, limit, 512<<20)
	}
}

func TestGCDefaultsLeaveWhatTheEnvironmentSets(t *testing.T) {
	restoreGC(t)
	for _, env := range []map[string]string{
		{"GOGC": "150"},
		{"GOMEMLIMIT": "1GiB"},
		{"GOGC": "", "GOMEMLIMIT": ""}, // set, even empty: the runtime's defaults stand
	} {
		// What the runtime made of the environment at start.
		debug.SetGCPercent(150)
		debug.SetMemoryLimit(1 << 30)
		_, hasGOGC := env["GOGC"]
		_, hasLimit := env["GOMEMLIMIT"]
		wantPct, wantLimit := 400, int64(512<<20)
		if hasGOGC {
			wantPct = 150
		}
		if hasLimit {
			wantLimit = 1 << 30
		}
		gc, mem := applyGCDefaults(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		pct, limit := current()
		if gc == hasGOGC || mem == hasLimit || pct != wantPct || limit != wantLimit {
			t.Errorf("%v: set %v %v, GOGC %d, limit %d; want GOGC %d, limit %d", env, gc, mem, pct, limit, wantPct, wantLimit)
		}
	}
}
