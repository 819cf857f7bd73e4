package spool

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// errPathTaken is wrapped when the spool's path names something other
// than the open file: lines appended to the open file would be in no file
// a restart can find.
var errPathTaken = errors.New("no longer names the spool's file; new lines are refused until the path is free again or the collector restarts")

// pathGoneLocked reports whether the spool's path no longer exists (the
// file was removed or renamed), and fails when it names something else
// (another file, a directory, a link). own is the open file's fstat, which
// the caller already has. A path it may not look at (its directory made
// unsearchable) is taken to be the file still: refusing would hold the
// open file's lines back, which replay can still send. Called with mu held.
func (s *Spool) pathGoneLocked(own os.FileInfo) (bool, error) {
	at, err := s.lstatFn(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true, nil
	case errors.Is(err, fs.ErrPermission):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("spool %s: stat its path: %w", s.path, err)
	}
	if !os.SameFile(at, own) {
		return false, fmt.Errorf("spool %s %w", s.path, errPathTaken)
	}
	return false, nil
}

// followPathLocked makes sure the spool's path still names the open file,
// whose fstat is own. When the file was removed or renamed, its pending
// lines are written to a new file at the path, which becomes the spool.
// Called with mu and replayMu held: no replay round reads the open file
// meanwhile.
func (s *Spool) followPathLocked(own os.FileInfo) error {
	gone, err := s.pathGoneLocked(own)
	if err != nil || !gone {
		return err
	}
	return s.rewriteRemovedLocked()
}

// followPathForAppendLocked is followPathLocked for an append, which holds
// only mu: a removed file is written again only while no replay round
// reads it; during one the append is refused, and the round's end writes
// the file again. Called with mu held.
func (s *Spool) followPathForAppendLocked(own os.FileInfo) error {
	gone, err := s.pathGoneLocked(own)
	if err != nil || !gone {
		return err
	}
	if !s.replayMu.TryLock() {
		return fmt.Errorf("spool %s: the file was removed; it is written again once the replay round under way ends", s.path)
	}
	defer s.replayMu.Unlock()
	return s.rewriteRemovedLocked()
}

// rewriteRemovedLocked writes the pending lines of the open file, which
// was removed from the spool's path, to a new file there, and takes it as
// the spool. A crash midway leaves the new file with a sidecar naming the
// old inode: Open cuts a torn last line and replays the file from its
// start. Called with mu and replayMu held.
func (s *Spool) rewriteRemovedLocked() error {
	created, err := fsutil.MkdirAll(filepath.Dir(s.path))
	if err == nil {
		err = fsutil.SyncParents(created)
	}
	if err != nil {
		return fmt.Errorf("spool %s: the file was removed; create its directory again: %w", s.path, err)
	}
	nf, _, err := openFile(s.path, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND)
	if err != nil {
		return pathError("spool", s.path, fmt.Errorf("the file was removed; create it again: %w", err))
	}
	pending := s.end - s.ack
	err = lockData(nf, s.path)
	if err == nil {
		err = copyPending(nf, s.f, s.ack, pending)
	}
	var ino uint64
	if err == nil {
		ino, err = inode(nf)
	}
	if err == nil {
		err = fsutil.SyncDir(filepath.Dir(s.path))
	}
	if err != nil {
		_ = nf.Close()
		_ = os.Remove(s.path)
		return fmt.Errorf("spool %s: the file was removed; write its %d pending bytes again: %w", s.path, pending, err)
	}
	oldAck := s.ack
	s.takeFileLocked(nf, ino, pending)
	_ = s.saveStartOffsetLocked() // the lines are safe either way
	s.reportLocked(Damage{Kind: DamageRemoved, Offset: oldAck, Bytes: pending,
		Reason: fmt.Sprintf("the spool file was removed or renamed; its %d pending bytes were written to a new file at its path", pending)})
	return nil
}

// copyPending copies n bytes at off of src to dst and syncs dst.
func copyPending(dst, src *os.File, off, n int64) error {
	if _, err := io.Copy(dst, io.NewSectionReader(src, off, n)); err != nil {
		return err
	}
	return dst.Sync()
}
