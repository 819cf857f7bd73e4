package spool

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// makePrivate makes the spool's file f (FileInfo fi) 0600 and owned by this
// process's user, as every file the spool makes is: a spool copied back
// with cp, restored from a backup or handed over by another user would
// otherwise show the audit lines appended to it to others until its first
// trim. It returns what it changed ("" when nothing), for the caller to
// log.
func makePrivate(f *os.File, fi os.FileInfo) (string, error) {
	var changed string
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		if err := f.Chmod(0o600); err != nil {
			return "", fmt.Errorf("%s is %s: make it 0600: %w", f.Name(), perm, err)
		}
		changed = fmt.Sprintf("%s: mode %s made 0600", f.Name(), perm)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) == os.Geteuid() {
		return changed, nil
	}
	if err := f.Chown(os.Geteuid(), os.Getegid()); err != nil {
		// A user who can write the file but not take it (not root):
		// it stays readable by its owner, which the mode cannot change.
		return changed, nil
	}
	if changed == "" {
		changed = f.Name() + ":"
	} else {
		changed += ","
	}
	return changed + fmt.Sprintf(" owner %d made %d", st.Uid, os.Geteuid()), nil
}

// makeQuarantinePrivate applies makePrivate to a quarantine file found at
// Open, which holds lines as they were in the spool.
func (s *Spool) makeQuarantinePrivate() error {
	q, fi, err := openFile(s.quarantinePath, os.O_RDONLY)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("spool %s: %w", s.path, err)
	}
	defer func() { _ = q.Close() }()
	return s.notePrivate(makePrivate(q, fi))
}

// notePrivate records in Recovery what makePrivate changed.
func (s *Spool) notePrivate(changed string, err error) error {
	if changed != "" {
		s.recovery.MadePrivate = append(s.recovery.MadePrivate, changed)
	}
	if err != nil {
		return fmt.Errorf("spool %s: %w", s.path, err)
	}
	return nil
}
