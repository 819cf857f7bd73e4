package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// lockFunc takes an audit path's owner lock: integrity.LockLog, or in a
// test a stand-in for a file system without flock.
type lockFunc func(path string) (*integrity.OwnerLock, error)

// lockLog takes the owner lock of path for a command that writes its
// sidecars, or prints why not: a collector sealing the log would go on
// appending to the sidecars the command rewrites. ok false means refused
// (exit status exitProblems).
func lockLog(cmd, path string, stderr io.Writer) (*integrity.OwnerLock, bool) {
	return lockLogWith(integrity.LockLog, cmd, path, stderr)
}

// missingLog reports whether path names no audit file, no closed segment
// and no sidecar of one (a handed-over log keeps only its note): the
// commands would otherwise leave a lock file beside a mistyped name, or
// start a log over nothing.
func missingLog(path string) bool {
	for _, suffix := range integrity.LogFileSuffixes() {
		if _, err := os.Lstat(path + suffix); !errors.Is(err, os.ErrNotExist) {
			return false
		}
	}
	segs, err := filesink.Segments(path)
	return err == nil && len(segs) == 0 || errors.Is(err, os.ErrNotExist)
}

// segmentOfLog returns the audit file of which path is a closed segment,
// when a log is there: the commands would start a second log over the
// segment, its sidecars beside it. A path named like a segment that has
// checkpoints of its own is a log.
func segmentOfLog(path string) (string, bool) {
	active, ok := filesink.ActiveOf(path)
	if !ok || missingLog(active) {
		return "", false
	}
	_, err := os.Lstat(integrity.CheckpointsPath(path))
	return active, errors.Is(err, os.ErrNotExist)
}

// lockLogWith is lockLog with the lock taken by lock.
func lockLogWith(lock lockFunc, cmd, path string, stderr io.Writer) (*integrity.OwnerLock, bool) {
	if active, ok := segmentOfLog(path); ok {
		_, _ = fmt.Fprintf(stderr, "%s: %s is a closed segment of %s: name the audit file; nothing was written\n", cmd, path, active)
		return nil, false
	}
	if missingLog(path) {
		_, _ = fmt.Fprintf(stderr, "%s: %s: no audit file, closed segment or sidecar of one here (a typo?); nothing was written\n", cmd, path)
		return nil, false
	}
	return lockPresent(lock, cmd, path, stderr)
}

// lockResetLog is lockLog for `log reset`, which also takes a path that
// holds nothing but a log a handover retired from it (its note gone): the
// collector refuses to start a log tied to nothing there, and names this
// command for it.
func lockResetLog(path string, stderr io.Writer) (*integrity.OwnerLock, bool) {
	if missingLog(path) && len(integrity.RetiredLogs(path)) > 0 {
		return lockPresent(integrity.LockLog, "log reset", path, stderr)
	}
	return lockLog("log reset", path, stderr)
}

// lockPresent is lockLogWith for a path known to hold a log.
func lockPresent(lock lockFunc, cmd, path string, stderr io.Writer) (*integrity.OwnerLock, bool) {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		_, _ = fmt.Fprintf(stderr, "%s: %s is not a regular file (%s): name the audit file itself; nothing was written\n", cmd, path, fi.Mode().Type())
		return nil, false
	}
	owner, err := lock(path)
	if err != nil {
		printOwnerRefusal(cmd, path, err, stderr)
		return nil, false
	}
	if owner.Unsupported {
		_, _ = fmt.Fprintf(stderr, "%s: the file system has no flock: make sure no collector is sealing %s\n", cmd, path)
	}
	return owner, true
}

// printOwnerRefusal words an error for the command line, a refusal by the
// owner lock in full.
func printOwnerRefusal(cmd, path string, err error, stderr io.Writer) {
	if errors.Is(err, integrity.ErrLogOwned) {
		_, _ = fmt.Fprintf(stderr, "%s: a collector is sealing %s (it holds %s); stop it first. Nothing was written\n",
			cmd, path, integrity.OwnerLockPath(path))
		return
	}
	_, _ = fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
}
