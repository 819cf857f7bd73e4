package spool

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// makePrivate makes the spool's file f (FileInfo fi) 0600 and owned by this
// process's user, as every file the spool makes is: a spool copied back
// with cp, restored from a backup or handed over by another user would
// otherwise show the audit lines appended to it to others until its first
// trim. It returns what it changed, or why it could not ("" when there
// was nothing to do), for the caller to log. A failure does not stop the
// spool: a file system without modes (a CIFS mount) refuses chmod.
func makePrivate(f *os.File, fi os.FileInfo) string {
	var changed []string
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		if err := f.Chmod(0o600); err != nil {
			changed = append(changed, fmt.Sprintf("mode %s left as it is: %v", perm, err))
		} else {
			changed = append(changed, fmt.Sprintf("mode %s made 0600", perm))
		}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		if err := f.Chown(os.Geteuid(), os.Getegid()); err != nil {
			// Only root can take a file over; its owner can still read it.
			changed = append(changed, fmt.Sprintf("owner %d left as it is: %v", st.Uid, err))
		} else {
			changed = append(changed, fmt.Sprintf("owner %d made %d", st.Uid, os.Geteuid()))
		}
	}
	if len(changed) == 0 {
		return ""
	}
	return f.Name() + ": " + strings.Join(changed, ", ")
}

// makeQuarantinePrivate applies makePrivate to a quarantine file found at
// Open, which holds lines as they were in the spool. One that cannot be
// opened is left to replay, which says why when it has a line to keep.
func (s *Spool) makeQuarantinePrivate() {
	q, fi, err := openFile(s.quarantinePath, os.O_RDONLY)
	if err != nil {
		return
	}
	defer func() { _ = q.Close() }()
	s.notePrivate(makePrivate(q, fi))
}

// notePrivate records in Recovery what makePrivate changed.
func (s *Spool) notePrivate(changed string) {
	if changed != "" {
		s.recovery.MadePrivate = append(s.recovery.MadePrivate, changed)
	}
}
