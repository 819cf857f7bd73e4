package sandboxauditexporter

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
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

// The file sinks may keep at most half the process's open-file limit
// (RLIMIT_NOFILE) open, all the collector's exporters together: the other
// half is for the receivers' sockets, the spool, the sealer's sidecars,
// directory syncs and the other components. Sinks that could take them
// all would meet EMFILE under that many sessions, and the collector would
// thrash on its retries.
const openFilesShare = 2

// maxOpenFiles returns the max_open_files a file sink can honour under
// the open-file limit nofile, the other exporters' sinks (by) keeping
// used files open. A value set above what is left of the share refuses
// the start, naming the key: the process could never honour it. The
// default (max_open_files 0 or filesink.DefaultMaxOpenFiles) is lowered
// to what is left instead (at least 1), with capped true, so a small
// container limit does not break an unchanged config.
func maxOpenFiles(set int, nofile uint64, used int, by []component.ID) (n int, capped bool, err error) {
	n = set
	if n == 0 {
		n = filesink.DefaultMaxOpenFiles
	}
	share := max(min(nofile/openFilesShare, math.MaxInt), 1)
	left := share - min(uint64(used), share)
	if uint64(n) <= left {
		return n, false, nil
	}
	if set == 0 || set == filesink.DefaultMaxOpenFiles {
		return int(max(left, 1)), true, nil
	}
	others := ""
	if used > 0 {
		ids := make([]string, len(by))
		for i, id := range by {
			ids[i] = strconv.Quote(id.String())
		}
		others = fmt.Sprintf(", of which the file %s of %s %s may keep %d open", plural.Pick(len(by), "sink", "sinks"),
			plural.Pick(len(by), "exporter", "exporters"), strings.Join(ids, ", "), used)
	}
	return 0, false, fmt.Errorf("file::max_open_files: %d is more than the file sink may keep open: the process's open-file limit "+
		"(RLIMIT_NOFILE) is %d and the sink takes at most half of it, %d%s; lower max_open_files or raise the limit", set, nofile, share, others)
}

// claimFile records fc with the collector's other file sinks (refusing a
// path another exporter rotates otherwise) and returns the max_open_files
// its sink can honour, warning once when the default is lowered to fit
// the open-file limit. A plain path's sink keeps one file open, whatever
// max_open_files says: it is not checked.
func (e *auditExporter) claimFile(fc *FileConfig) (int, error) {
	nofile, limitErr := fsutil.OpenFileLimit()
	templated := filesink.HasPlaceholder(fc.Path)
	if limitErr != nil && templated {
		// Not knowing the limit is no reason to refuse the start: it is
		// taken as no limit.
		e.logger.Warn("Cannot read the open-file limit; file.max_open_files is not checked against it", zap.Error(limitErr))
		nofile = math.MaxUint64
	}
	n, capped := fc.MaxOpenFiles, false
	err := e.files.claim(e.set.ID, fc, func(used int, by []component.ID) (int, error) {
		if !templated {
			return 1, nil
		}
		var err error
		n, capped, err = maxOpenFiles(fc.MaxOpenFiles, nofile, used, by)
		return n, err
	})
	if capped {
		e.logger.Warn("file.max_open_files lowered to what is left of half the process's open-file limit (RLIMIT_NOFILE) "+
			"after the collector's other file sinks; templated files past it are closed and reopened as needed",
			zap.Int("max_open_files", n), zap.Int("default", filesink.DefaultMaxOpenFiles), zap.Uint64("open_file_limit", nofile))
	}
	return n, err
}

// warnSpoolBelowLine warns once when http.spool.max_size is under one
// line of max_line_bytes and its newline. Such a spool is allowed (a
// small spool for small events is a fair choice), but an event that long
// is delivered only when the endpoint takes it at once: otherwise the
// spool refuses it as full, and the push fails as with any full spool,
// logged and counted, never dropped unseen.
func (e *auditExporter) warnSpoolBelowLine(sc *SpoolConfig) {
	if sc.MaxSize <= 0 || sc.MaxSize > int64(e.cfg.MaxLineBytes) {
		return
	}
	e.logger.Warn("http.spool.max_size is smaller than one line of max_line_bytes: an event whose line does not fit "+
		"is delivered only when the endpoint takes it at once; otherwise the spool refuses it as full and the push fails "+
		"(reason spool_full), as with any full spool",
		zap.Int64("max_size", sc.MaxSize), zap.Int("max_line_bytes", e.cfg.MaxLineBytes))
}
