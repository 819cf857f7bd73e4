package filesink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/groupcommit"
)

// commit commits the group at the front of of's queue, own first (see
// groupcommit). If the file could not be opened or cannot be locked, only
// own fails (the error may be own's context): the batches behind it try
// again with their own callers.
func (s *Sink) commit(ctx context.Context, of *openFile, own *groupcommit.Batch) {
	defer of.queue.Pop()
	of.mu.Lock()
	defer of.mu.Unlock()
	if of.err != nil {
		own.Finish(of.err)
		return
	}
	f, size, locked, err := s.lockCurrent(ctx, of)
	if err != nil {
		own.Finish(err)
		return
	}
	// With fsync always a group would save no sync and only hold the lock
	// longer against another writer, so each batch goes alone.
	limit := groupcommit.MaxGroupBytes
	if s.fsync == FsyncAlways {
		limit = 0
	}
	group := of.queue.Group(limit)
	f, size, locked, err = s.ready(ctx, of, f, size, locked, group)
	if err != nil {
		groupcommit.FinishAll(group, err)
		return
	}
	if locked {
		defer fsutil.Unlock(int(f.Fd()))
	}
	// Before the group is written: one that cannot be acknowledged is
	// not written, so the callers' retries leave no duplicate.
	if err := s.syncEntries(of); err != nil {
		groupcommit.FinishAll(group, err)
		return
	}
	of.end = s.appendGroup(f, size, group)
}

// ready readies of's file, locked (when locked) and size bytes long, for
// group: a torn last line is cut off first, so that no segment ends in one,
// then the file is rotated when due, between two groups, under the lock:
// no batch is ever split. On error the lock is released.
func (s *Sink) ready(ctx context.Context, of *openFile, f *os.File, size int64, locked bool, group []*groupcommit.Batch) (*os.File, int64, bool, error) {
	size, err := s.repairTail(of, f, size, locked)
	if err == nil && s.rot != nil && size == 0 {
		// An empty file's segment begins with its first line.
		of.since = s.rot.clock()
	}
	if err == nil && s.rotationDue(of, size, group) {
		if f, size, locked, err = s.rotateLocked(ctx, of, f, size, locked); err == nil {
			size, err = s.repairTail(of, f, size, locked)
		}
	}
	if err != nil && locked {
		fsutil.Unlock(int(f.Fd()))
	}
	return f, size, locked, err
}

// lockCurrent takes flock on of's file and returns it with its size. A
// cached descriptor can outlive the path's file (logrotate renamed it,
// someone deleted it, the Python sink recreated it); writing there would
// hide the lines in a rotated file or lose them with a deleted inode, so the
// descriptor is checked against the path under the lock and reopened when
// they differ. Without flock on the filesystem, like the Python sink, it
// goes on unlocked (locked false) rather than lose the batches.
func (s *Sink) lockCurrent(ctx context.Context, of *openFile) (*os.File, int64, bool, error) {
	for reopens := 0; ; reopens++ {
		f := of.f
		fd := int(f.Fd())
		locked := false
		switch err := s.lockFn(ctx, fd); {
		case err == nil:
			locked = true
		case errors.Is(err, fsutil.ErrLockUnsupported):
		default:
			return nil, 0, false, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		size, current, err := of.sizeIfCurrent()
		if err == nil && current {
			if of.end > 0 && size < of.end {
				s.cutBack(of, size)
			}
			return f, size, locked, nil
		}
		if locked {
			fsutil.Unlock(fd)
		}
		switch {
		case err != nil:
			return nil, 0, false, err
		case reopens == maxReopens:
			return nil, 0, false, fmt.Errorf("%s was replaced %d times during one write", of.path, maxReopens)
		}
		if of.end > 0 {
			// Lines we appended, acknowledged, left the path with it.
			s.leftThePath(of)
		}
		if err := s.reopen(of); err != nil {
			return nil, 0, false, err
		}
	}
}

// appendGroup appends each batch of group (one write(2) per batch, or per
// line with fsync always) and with fsync batch syncs them all at once; the
// caller holds the lock and size is the file's size under it. Each batch
// is all or nothing: one that fails part-way (a full disk takes a prefix
// and refuses the rest) is cut back out, still under the lock, and fails
// alone, so no reader trips over a torn fragment and the caller's retry
// writes it whole. If the shared sync fails, every batch of the group is
// cut back and fails: the pages the kernel lost may be any of theirs.
// size ends in a whole line (see ready); it returns the size this group
// leaves, -1 if any batch failed.
func (s *Sink) appendGroup(f *os.File, size int64, group []*groupcommit.Batch) int64 {
	end := size           // the file's size after the batches written so far
	synced := group[:0:0] // the batches written, which wait for the sync
	cut := false
	for i, b := range group {
		err := s.appendBody(f, b.Data)
		if err == nil {
			end += int64(len(b.Data))
			synced = append(synced, b)
			continue
		}
		// With fsync batch the group's sync below makes the cut durable.
		made, err := s.undo(f, end, err, s.fsync == FsyncAlways)
		b.Finish(err)
		cut = true
		if !made { // a fragment may follow end: the next group's repairTail cuts it
			groupcommit.FinishAll(group[i+1:], fmt.Errorf("not written after a failed undo in %s: %v", f.Name(), err))
			break
		}
	}
	if s.fsync == FsyncBatch && (len(synced) > 0 || cut) {
		if err := s.syncFn(f); err != nil {
			_, err = s.undo(f, size, fmt.Errorf("sync %s: %w", f.Name(), err), true)
			groupcommit.FinishAll(synced, err)
			return -1
		}
	}
	groupcommit.FinishAll(synced, nil)
	if cut || len(synced) == 0 {
		return -1
	}
	return end
}

// appendBody writes one batch per the fsync mode (with FsyncAlways, a sync
// after each line).
func (s *Sink) appendBody(f *os.File, data []byte) error {
	if s.fsync != FsyncAlways {
		return s.writeAll(f, data)
	}
	for len(data) > 0 {
		n := bytes.IndexByte(data, '\n') + 1
		if err := s.writeAll(f, data[:n]); err != nil {
			return err
		}
		if err := s.syncFn(f); err != nil {
			return fmt.Errorf("sync %s: %w", f.Name(), err)
		}
		data = data[n:]
	}
	return nil
}

// undo cuts f back to size, the length it had before the failed append,
// syncing the cut when sync is set. It returns whether the cut was made and
// cause joined with any failure of it. If the cut fails, the next append's
// repairTail still cuts a torn fragment off.
func (s *Sink) undo(f *os.File, size int64, cause error, sync bool) (cut bool, err error) {
	if err := f.Truncate(size); err != nil {
		return false, errors.Join(cause, fmt.Errorf("undo partial batch in %s (truncate to %d bytes): %w", f.Name(), size, err))
	}
	if sync {
		if err := s.syncFn(f); err != nil {
			return true, errors.Join(cause, fmt.Errorf("sync undo of partial batch in %s: %w", f.Name(), err))
		}
	}
	return true, cause
}
