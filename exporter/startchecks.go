package sandboxauditexporter

import (
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

// checkSpoolIsNoSealedFile refuses a spool at a sealed audit file (the
// log's owner lock lies beside it), another exporter's or this one's: the
// spool would take the audit lines for its own, send them away and trim
// them.
func checkSpoolIsNoSealedFile(sc *SpoolConfig) error {
	lock := integrity.OwnerLockPath(sc.Path)
	if _, err := os.Lstat(lock); err == nil {
		return fmt.Errorf("http::spool::path: %s is an audit file with a signed log (%s lies beside it); name another file", sc.Path, filepath.Base(lock))
	}
	return nil
}
