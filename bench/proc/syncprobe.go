package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// SyncProbe measures what an fdatasync costs in dir right now: it appends
// writes batches of size bytes to a scratch file, syncing after each, and
// returns the median sync time. Ours waits for one such sync per request and
// the baseline never syncs, so a host whose sync latency has moved (the
// neighbours' I/O) can move the ratio; the probe shows whether it did.
func SyncProbe(dir string, writes, size int) (time.Duration, error) {
	return SyncProbeAfter(dir, writes, size, 0)
}

// SyncProbeAfter is SyncProbe with a pause of gap before each append, as a
// collector meets a sync request: on a VM an fdatasync issued after the
// vCPU sat idle takes longer than one issued back to back.
func SyncProbeAfter(dir string, writes, size int, gap time.Duration) (time.Duration, error) {
	if writes <= 0 || size <= 0 || gap < 0 {
		return 0, fmt.Errorf("sync probe: writes and size must be > 0 and gap >= 0, got %d, %d and %v", writes, size, gap)
	}
	f, err := os.CreateTemp(dir, "syncprobe-")
	if err != nil {
		return 0, fmt.Errorf("sync probe: %w", err)
	}
	defer func() { _ = os.Remove(f.Name()) }()
	defer func() { _ = f.Close() }()
	// Lines, not a page-aligned block: aligned appends behave differently
	// on this kind of VM (bench/RESULTS.md, "End to end against the contrib
	// fileexporter, and `canon` against Python").
	buf := make([]byte, size)
	for i := range buf {
		buf[i] = 'x'
		if i%1000 == 999 {
			buf[i] = '\n'
		}
	}
	d := make([]time.Duration, 0, writes)
	for range writes {
		if gap > 0 {
			time.Sleep(gap)
		}
		if _, err := f.Write(buf); err != nil {
			return 0, fmt.Errorf("sync probe: %s: %w", filepath.Base(f.Name()), err)
		}
		start := time.Now()
		if err := fsutil.Fdatasync(f); err != nil { // what the file sink calls
			return 0, fmt.Errorf("sync probe: %s: %w", filepath.Base(f.Name()), err)
		}
		d = append(d, time.Since(start))
	}
	slices.Sort(d)
	return d[len(d)/2], nil // the upper middle for an even count: a probe, not a statistic
}
