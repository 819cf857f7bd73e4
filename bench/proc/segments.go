package proc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// WaitCompressed waits until every closed segment of the audit file at
// path is compressed (no plain segment, no .zst.tmp left), polling every
// 10 ms until ctx ends. A benchmark of compression times this wait too:
// work the collector still owes when the load ends is part of its cost.
func WaitCompressed(ctx context.Context, path string) (time.Duration, error) {
	began := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		done, err := allCompressed(path)
		if err != nil || done {
			return time.Since(began), err
		}
		select {
		case <-ctx.Done():
			return time.Since(began), fmt.Errorf("segments of %s still plain: %w", path, ctx.Err())
		case <-tick.C:
		}
	}
}

func allCompressed(path string) (bool, error) {
	segs, err := filesink.Segments(path)
	if err != nil {
		return false, err
	}
	for _, s := range segs {
		if !s.Compressed {
			return false, nil
		}
		if _, err := os.Lstat(s.Plain); err == nil { // the plain twin goes last
			return false, nil
		}
	}
	tmps, err := filepath.Glob(filepath.Join(filepath.Dir(path), "*"+filesink.ZstdSuffix+".tmp"))
	return err == nil && len(tmps) == 0, err
}

// TrailStats is FileStats over the audit file at path and its closed
// segments: bytes on disk (compressed where they are) and lines (read
// through the decompression), so a rotating run is checked line for line
// against a plain one.
func TrailStats(path string) (size int64, lines int, err error) {
	size, lines, err = FileStats(path)
	if err != nil {
		return 0, 0, err
	}
	segs, err := filesink.Segments(path)
	if err != nil {
		return 0, 0, err
	}
	for _, s := range segs {
		n, l, err := segmentStats(s)
		if err != nil {
			return 0, 0, err
		}
		size, lines = size+n, lines+l
	}
	return size, lines, nil
}

func segmentStats(s filesink.Segment) (size int64, lines int, err error) {
	fi, err := os.Lstat(s.Path)
	if err != nil {
		return 0, 0, err
	}
	r, err := integrity.TrailPart{Path: s.Path, Compressed: s.Compressed}.Open()
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	if _, lines, err = readStats(r); err != nil {
		return 0, 0, fmt.Errorf("read %s: %w", s.Path, err)
	}
	return fi.Size(), lines, nil
}
