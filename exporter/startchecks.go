package sandboxauditexporter

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// Validate runs before any component starts, when a spool or an audit
// file named twice may not exist yet. These checks run again once the
// files are there, so such a config fails at start rather than at the
// first write.

// checkFileIsNoSpool refuses a file that is an HTTP sink's spool: another
// exporter's (checked before this exporter opens anything), or this one's
// reached through a symbolic link (checked once its spool is open).
func checkFileIsNoSpool(fc *FileConfig) error {
	if err := filesink.CheckNotSpool(fc.Path); err != nil {
		return fmt.Errorf("file::path: %w", err)
	}
	return nil
}

// checkSpoolIsNoSealedFile refuses a spool at a sealed audit file, another
// exporter's or this one's: the spool would take the audit lines for its
// own, send them away and trim them. The file is sealed when its log has
// sidecars (a new log's first checkpoint, of 0 lines, included), or when
// a sealer holds its owner lock. The lock file alone stays after a sealer
// that signed nothing (a start refused), or once the log's sidecars were
// moved away, and does not make the path an audit file.
func checkSpoolIsNoSealedFile(sc *SpoolConfig) error {
	lock := integrity.OwnerLockPath(sc.Path)
	if _, err := os.Lstat(lock); err != nil {
		return nil
	}
	sealed := func(why string) error {
		return fmt.Errorf("http::spool::path: %s is an audit file with a signed log (%s); name another file", sc.Path, why)
	}
	if side := integrity.SidecarBeside(sc.Path); side != "" {
		return sealed(side + " lies beside it")
	}
	held, err := integrity.LockLog(sc.Path)
	switch {
	case errors.Is(err, integrity.ErrLogOwned):
		return sealed("a sealer holds " + filepath.Base(lock))
	case err != nil:
		return fmt.Errorf("http::spool::path: %w", err)
	case held.Unsupported:
		// No flock: whether a sealer holds it cannot be told.
		return sealed(filepath.Base(lock) + " lies beside it")
	}
	held.Release()
	return nil
}
