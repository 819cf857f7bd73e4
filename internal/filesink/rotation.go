package filesink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/groupcommit"
)

// Retention reasons given to Rotation.OnRemoved.
const (
	RemovedMaxBackups = "max_backups"
	RemovedMaxAge     = "max_days"
)

// Rotation configures the sink's own rotation (Options.Rotation). A file
// is rotated under the writers' flock, before a batch and never inside
// one: it is renamed to its next segment name (see Segments) and the batch
// goes to a new file at the path, where a writer opening by path (the
// Python sink) goes on too.
type Rotation struct {
	// MaxBytes rotates a file before a batch that would take it past this
	// size (a file is never left empty: a batch larger than MaxBytes goes
	// whole into a file of its own); 0: no size limit.
	MaxBytes int64
	// Interval rotates a file this long after its segment began (at the
	// rotation before, or when this sink first opened it), at its next
	// batch; 0: not by time.
	Interval time.Duration
	// MaxBackups keeps at most this many closed segments per file; 0: all.
	MaxBackups int
	// MaxAge removes closed segments older than this (by the time in their
	// name); 0: kept whatever their age.
	MaxAge time.Duration
	// Compress turns each closed segment into a zstd frame (.zst), off the
	// writers' path.
	Compress bool

	// OnRotate is told of each rotation, under the lock, after the rename
	// and before any line goes to the new file. It must be quick.
	OnRotate func(path, segment string)
	// BeforeRemove, when set, must accept a removal by retention before it
	// happens (integrity records it); an error keeps the segment.
	BeforeRemove func(path string, seg Segment) error
	// OnRemoved is told of each segment retention removed, with the reason
	// (RemovedMaxBackups or RemovedMaxAge).
	OnRemoved func(path string, seg Segment, reason string)
	// OnError is told of a rotation, compression or retention step that
	// failed; no segment is lost by one, and it is tried again later.
	OnError func(path string, err error)

	// now and grace are the clock and the quiet time a segment needs
	// before it is compressed; tests set them.
	now   func() time.Time
	grace time.Duration
}

// defaultCompressGrace is how long a closed segment must be left alone
// before it is compressed: a writer that opened the path just before the
// rotation may still be waiting for the lock to append its line there.
const defaultCompressGrace = time.Second

func (r *Rotation) validate() error {
	switch {
	case r.MaxBytes < 0:
		return fmt.Errorf("rotation max bytes must be >= 0, got %d", r.MaxBytes)
	case r.Interval < 0:
		return fmt.Errorf("rotation interval must be >= 0, got %s", r.Interval)
	case r.MaxBackups < 0:
		return fmt.Errorf("rotation max backups must be >= 0, got %d", r.MaxBackups)
	case r.MaxAge < 0:
		return fmt.Errorf("rotation max age must be >= 0, got %s", r.MaxAge)
	}
	return nil
}

func (r *Rotation) clock() time.Time {
	if r.now != nil {
		return r.now()
	}
	return time.Now()
}

func (r *Rotation) fail(path string, err error) {
	if r.OnError != nil {
		r.OnError(path, err)
	}
}

// rotationDue reports whether the file, size bytes long, is rotated before
// group is appended.
func (s *Sink) rotationDue(of *openFile, size int64, group []*groupcommit.Batch) bool {
	r := s.rot
	if r == nil || size == 0 {
		return false
	}
	if r.MaxBytes > 0 {
		n := size
		for _, b := range group {
			n += int64(len(b.Data))
		}
		if n > r.MaxBytes {
			return true
		}
	}
	return r.Interval > 0 && r.clock().Sub(of.since) >= r.Interval
}

// rotateLocked renames of's file, locked (when locked) and current, to its
// next segment name, and returns the new file at the path, locked, with
// its size. A rename that fails leaves the file where it is: the group is
// appended there and the failure reported, since rotation never costs a
// line.
func (s *Sink) rotateLocked(ctx context.Context, of *openFile, f *os.File, size int64, locked bool) (*os.File, int64, bool, error) {
	seg, err := s.renameToSegment(of.path)
	if err != nil {
		s.rot.fail(of.path, err)
		return f, size, locked, nil
	}
	if s.rot.OnRotate != nil {
		s.rot.OnRotate(of.path, seg)
	}
	if locked {
		fsutil.Unlock(int(f.Fd()))
	}
	of.since = s.rot.clock()
	s.maint.schedule(of.path)
	return s.lockCurrent(ctx, of)
}

// renameToSegment renames the file at path to its next segment name and
// makes the rename durable.
func (s *Sink) renameToSegment(path string) (string, error) {
	segs, err := Segments(path)
	if err != nil {
		return "", fmt.Errorf("filesink: rotate %s: %w", path, err)
	}
	now := s.rot.clock().UTC().Truncate(time.Second)
	seq := int64(1)
	if len(segs) > 0 {
		last := segs[len(segs)-1]
		seq = last.Seq + 1
		if now.Before(last.Time) {
			now = last.Time
		}
	}
	seg := namerFor(path).name(now, seq)
	if err := renameNoReplace(path, seg); err != nil {
		return "", fmt.Errorf("filesink: rotate %s to %s: %w", path, filepath.Base(seg), err)
	}
	if err := fsutil.SyncDir(filepath.Dir(path)); err != nil {
		// The rename happened: the segment exists, only its durability
		// across a power loss is in doubt.
		s.rot.fail(path, fmt.Errorf("filesink: sync directory after rotating %s: %w", path, err))
	}
	return seg, nil
}

// renameNoReplace renames from to to, failing if to exists.
func renameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		// A file system without RENAME_NOREPLACE: link then unlink keeps
		// the promise (link fails on an existing name).
		if err = unix.Link(from, to); err == nil {
			err = unix.Unlink(from)
		}
	}
	return err
}
