package main

import (
	"math"
	"os"
	"runtime/debug"
	"strings"
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
	gc, mem := applyGCDefaults(func(string) (string, bool) { return "", false }, cgroupFiles("/", ""))
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
		gc, mem := applyGCDefaults(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, cgroupFiles("/", ""))
		pct, limit := current()
		if gc == hasGOGC || mem == hasLimit || pct != wantPct || limit != wantLimit {
			t.Errorf("%v: set %v %v, GOGC %d, limit %d; want GOGC %d, limit %d", env, gc, mem, pct, limit, wantPct, wantLimit)
		}
	}
}

// cgroupFiles answers reads of /proc/self/cgroup and the memory.max it
// names; an empty max means the file is missing.
func cgroupFiles(group, max string) func(string) ([]byte, error) {
	m := map[string]string{"/proc/self/cgroup": "0::" + group + "\n"}
	if max != "" {
		m["/sys/fs/cgroup"+strings.TrimSuffix(group, "/")+"/memory.max"] = max + "\n"
	}
	return files(m)
}

func TestGCMemoryLimitFollowsASmallerCgroupLimit(t *testing.T) {
	restoreGC(t)
	for _, c := range []struct {
		group, max string
		want       int64
	}{
		{"/", "268435456", 3 << 26},                             // 256 MiB: three quarters of it
		{"/system.slice/agent.service", "402653184", 288 << 20}, // 384 MiB
		{"/", "max", 512 << 20},                                 // no limit
		{"/", "4294967296", 512 << 20},                          // larger than the default
		{"/", "", 512 << 20},                                    // no cgroup v2 file
		{"/", "junk", 512 << 20},
	} {
		debug.SetMemoryLimit(math.MaxInt64)
		applyGCDefaults(func(string) (string, bool) { return "", false }, cgroupFiles(c.group, c.max))
		if _, limit := current(); limit != c.want {
			t.Errorf("cgroup %s memory.max %q: limit %d, want %d", c.group, c.max, limit, c.want)
		}
	}
}

// files answers reads from a fixed set; anything else is missing.
func files(m map[string]string) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		if v, ok := m[name]; ok {
			return []byte(v), nil
		}
		return nil, os.ErrNotExist
	}
}

func TestGCMemoryLimitFollowsACgroupV1Limit(t *testing.T) {
	restoreGC(t)
	const v1self = "12:pids:/docker/abc\n4:cpu,cpuacct:/docker/abc\n3:memory:/docker/abc\n0::/docker/abc\n"
	for _, c := range []struct {
		name  string
		files map[string]string
		want  int64
	}{
		{"v1 group as named", map[string]string{"/proc/self/cgroup": v1self,
			"/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "268435456\n"}, 3 << 26},
		{"v1 group at the root (a container's view)", map[string]string{"/proc/self/cgroup": v1self,
			"/sys/fs/cgroup/memory/memory.limit_in_bytes": "402653184\n"}, 288 << 20},
		{"v1 unlimited", map[string]string{"/proc/self/cgroup": v1self,
			"/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, 512 << 20},
		{"v1 memory among other controllers", map[string]string{"/proc/self/cgroup": "5:blkio,memory:/a\n",
			"/sys/fs/cgroup/memory/a/memory.limit_in_bytes": "268435456\n"}, 3 << 26},
		{"hybrid: v2 line without memory.max, v1 limit", map[string]string{"/proc/self/cgroup": "0::/a\n3:memory:/a\n",
			"/sys/fs/cgroup/memory/a/memory.limit_in_bytes": "268435456\n"}, 3 << 26},
		{"no memory controller", map[string]string{"/proc/self/cgroup": "4:cpu:/a\n",
			"/sys/fs/cgroup/memory/memory.limit_in_bytes": "268435456\n"}, 512 << 20},
	} {
		debug.SetMemoryLimit(math.MaxInt64)
		applyGCDefaults(func(string) (string, bool) { return "", false }, files(c.files))
		if _, limit := current(); limit != c.want {
			t.Errorf("%s: limit %d, want %d", c.name, limit, c.want)
		}
	}
}
