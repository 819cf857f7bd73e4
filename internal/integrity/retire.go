package integrity

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// sidecarSuffixes are every file an audit path's log keeps beside it.
var sidecarSuffixes = [...]string{"", StoreSuffix, CheckpointsSuffix, SegmentsSuffix, WitnessedSuffix, HandoverSuffix}

// RetireLog moves the log of the audit path aside after its handover, so
// that a new log starts at the path. The file and its sidecars become
// PATH.retired-<time> (-2, -3... after another handover in the same
// second). A rotated log goes whole into a directory of that name, every
// file under its own name, so its segment records still name its
// segments. It returns the retired file: the path in that directory for
// a rotated log. v reads the segment records. Run it with the writers
// stopped.
func RetireLog(path string, v note.Verifier, now time.Time) (string, error) {
	segs, err := filesink.Segments(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	sl, err := LoadSegmentLog(path, v)
	if err != nil {
		return "", fmt.Errorf("%s: %w", SegmentsPath(path), err)
	}
	to, err := freeRetiredName(path, now)
	if err != nil {
		return "", err
	}
	if len(segs) == 0 && sl.Closed() == 0 {
		for _, suffix := range sidecarSuffixes {
			if err := os.Rename(path+suffix, to+suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
				return "", fmt.Errorf("retire %s: %w", path+suffix, err)
			}
		}
		return to, fsutil.SyncDir(filepath.Dir(path))
	}
	if err := os.Mkdir(to, 0o700); err != nil {
		return "", fmt.Errorf("retire %s: %w", path, err)
	}
	// The segments first, the file and its sidecars last: until then the
	// path still reads as a rotated log.
	var files []string
	for _, s := range segs {
		files = append(files, s.Path, s.Plain, s.Plain+filesink.ZstdSuffix+".tmp")
	}
	for _, suffix := range sidecarSuffixes {
		files = append(files, path+suffix)
	}
	for _, f := range files {
		if err := os.Rename(f, filepath.Join(to, filepath.Base(f))); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("retire %s: %w", f, err)
		}
	}
	if err := fsutil.SyncDir(to); err != nil {
		return "", fmt.Errorf("retire %s: %w", path, err)
	}
	return filepath.Join(to, filepath.Base(path)), fsutil.SyncDir(filepath.Dir(path))
}

// freeRetiredName is the first PATH.retired-<time>[-N] no file uses.
func freeRetiredName(path string, now time.Time) (string, error) {
	base := path + ".retired-" + now.UTC().Format("20060102T150405Z")
	for i := 1; i <= 100; i++ {
		to := base
		if i > 1 {
			to = fmt.Sprintf("%s-%d", base, i)
		}
		free := true
		for _, suffix := range sidecarSuffixes {
			if _, err := os.Lstat(to + suffix); err == nil {
				free = false
				break
			}
		}
		if free {
			return to, nil
		}
	}
	return "", fmt.Errorf("%s and 99 names after it exist already", base)
}

// HandoverLink reads, without checking a signature, what ties the log of
// the audit path to others: the origin of its first checkpoint, and the
// next origin its final checkpoint names ("" when it has none). verify
// orders the logs by it; the signatures are checked when each is read.
func HandoverLink(path string) (origin, next string) {
	f, _, err := fsutil.OpenRegular(CheckpointsPath(path), os.O_RDONLY|noFollow, 0)
	if err != nil {
		return "", ""
	}
	defer func() { _ = f.Close() }()
	nr := NewNoteReader(f)
	for {
		rec, err := nr.Next()
		if err == io.EOF || err != nil {
			return origin, next
		}
		text, _, _ := cutNoteText(rec)
		if origin == "" {
			first, _, _ := bytes.Cut(text, []byte("\n"))
			origin = string(first)
		}
		if h, ok, err := ParseHandover(text); ok && err == nil {
			next = h.NextOrigin
		}
	}
}
