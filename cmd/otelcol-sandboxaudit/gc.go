package main

import (
	"bytes"
	"path"
	"runtime/debug"
	"strconv"
)

// The garbage collector's settings unless the environment sets GOGC or
// GOMEMLIMIT. The collector's live heap is tens of MiB, and every request
// allocates its decoded spans and its lines anew, so at Go's default of
// GOGC=100 a collector under load spends about a tenth of its CPU
// collecting; at 400 it collects a quarter as often, for a heap of a few
// times its live size (about 120–140 MiB peak RSS under `make bench-e2e`).
// The soft limit stops that growth where a large or hostile load keeps
// much live: past 512 MiB the collector collects as often as it must
// (up to half its CPU) instead of letting the heap double. In a cgroup
// whose memory.max leaves less, the soft limit is three quarters of that:
// a soft limit above the hard one would never act.
const (
	defaultGCPercent   = 400
	defaultMemoryLimit = 512 << 20
)

// applyGCDefaults sets what the environment (read through lookup) leaves
// unset, and reports which it set. readFile reads the cgroup files.
func applyGCDefaults(lookup func(string) (string, bool), readFile func(string) ([]byte, error)) (gcPercent, memoryLimit bool) {
	if _, set := lookup("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
		gcPercent = true
	}
	if _, set := lookup("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(softMemoryLimit(readFile))
		memoryLimit = true
	}
	return gcPercent, memoryLimit
}

// softMemoryLimit is defaultMemoryLimit, or three quarters of the process's
// cgroup v2 memory.max when that is smaller. Anything unreadable leaves
// the default.
func softMemoryLimit(readFile func(string) ([]byte, error)) int64 {
	self, err := readFile("/proc/self/cgroup")
	if err != nil {
		return defaultMemoryLimit
	}
	var group string
	for line := range bytes.Lines(self) {
		if g, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("0::")); ok {
			group = string(g)
		}
	}
	if group == "" {
		return defaultMemoryLimit
	}
	raw, err := readFile(path.Join("/sys/fs/cgroup", path.Clean("/"+group), "memory.max"))
	if err != nil {
		return defaultMemoryLimit
	}
	hard, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	if err != nil || hard <= 0 || hard/4*3 >= defaultMemoryLimit {
		return defaultMemoryLimit // "max", or room enough
	}
	return hard / 4 * 3
}
