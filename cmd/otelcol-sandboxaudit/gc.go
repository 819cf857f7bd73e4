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
// whose memory limit leaves less, the soft limit is three quarters of that:
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

// softMemoryLimit is defaultMemoryLimit, or three quarters of the
// process's cgroup memory limit when that is smaller. Anything unreadable
// leaves the default.
func softMemoryLimit(readFile func(string) ([]byte, error)) int64 {
	hard, ok := cgroupMemoryLimit(readFile)
	if !ok || hard <= 0 || hard/4*3 >= defaultMemoryLimit {
		return defaultMemoryLimit // no limit, or room enough
	}
	return hard / 4 * 3
}

// cgroupMemoryLimit reads the hard memory limit of the process's cgroup:
// v2's memory.max, or v1's memory.limit_in_bytes (hosts and older
// container runtimes still mount v1). A v1 group's path is tried as named
// and at the hierarchy's root, where a container sees its own group.
func cgroupMemoryLimit(readFile func(string) ([]byte, error)) (int64, bool) {
	self, err := readFile("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	for line := range bytes.Lines(self) {
		id, rest, _ := bytes.Cut(bytes.TrimSpace(line), []byte(":"))
		controllers, group, ok := bytes.Cut(rest, []byte(":"))
		if !ok {
			continue
		}
		var files []string
		switch {
		case string(id) == "0" && len(controllers) == 0:
			files = []string{path.Join("/sys/fs/cgroup", path.Clean("/"+string(group)), "memory.max")}
		case hasController(controllers, "memory"):
			files = []string{
				path.Join("/sys/fs/cgroup/memory", path.Clean("/"+string(group)), "memory.limit_in_bytes"),
				"/sys/fs/cgroup/memory/memory.limit_in_bytes",
			}
		}
		for _, f := range files {
			if raw, err := readFile(f); err == nil {
				hard, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
				return hard, err == nil // "max" (v2 without a limit) is not a number
			}
		}
	}
	return 0, false
}

func hasController(list []byte, name string) bool {
	for c := range bytes.SplitSeq(list, []byte(",")) {
		if string(c) == name {
			return true
		}
	}
	return false
}
