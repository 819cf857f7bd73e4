package proc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
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
	if !s.Compressed {
		return FileStats(s.Path)
	}
	f, err := os.Open(s.Path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	d, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return 0, 0, err
	}
	defer d.Close()
	if _, lines, err = readStats(d); err != nil {
		return 0, 0, fmt.Errorf("read %s: %w", s.Path, err)
	}
	return fi.Size(), lines, nil
}
