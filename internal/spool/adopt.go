package spool

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/lines"
)

// adoptIfValid takes a file with lines and no sidecar as a spool when each
// of its whole lines passes Check: a spool whose sidecar was lost, to be
// replayed from its start. A torn last line is left to Open's recovery.
// Anything else (a log, a line that fails) is refused with ErrNotASpool,
// naming the first line that failed. Since an audit file named as the
// spool passes too, the file as found stays under a second name (see
// keepAdopted) rather than being trimmed away.
func (s *Spool) adoptIfValid() error {
	f, _, err := openFile(s.path, os.O_RDONLY)
	if err != nil {
		return pathError("spool", s.path, err)
	}
	defer func() { _ = f.Close() }()
	lr := lines.NewReader(f, readBufferSize, s.maxLine)
	var off int64
	for {
		ln, err := lr.Next()
		if errors.Is(err, io.EOF) || err == nil && !ln.Newline {
			s.adopted(false)
			return nil
		}
		if err != nil {
			return fmt.Errorf("spool %s: read: %w", s.path, err)
		}
		if reason := s.vet(ln); reason != "" {
			return fmt.Errorf("%s %w: its line at offset %d is %s; refusing to replay and trim it. If it is a spool, "+
				"replay it with `sandboxaudit replay --adopt`, or move it aside", s.path, ErrNotASpool, off, reason)
		}
		off += ln.Size
	}
}

// adopted records that the file was taken as a spool, on the operator's
// word (asked) or because every line is valid, and keeps it as found.
func (s *Spool) adopted(asked bool) {
	s.recovery.Adopted, s.recovery.AdoptAsked = true, asked
	s.recovery.AdoptedKept, s.recovery.AdoptedKeptErr = s.keepAdopted()
}

// ErrAdoptedOverLimit is wrapped by Recovery.AdoptedKeptErr when another
// copy of an adopted file would take the .adopted- copies past MaxSize.
var ErrAdoptedOverLimit = errors.New("the .adopted- copies would exceed the spool's max size")

// adoptedSuffix names the copies keepAdopted makes: <spool>.adopted-<unixnano>.
const adoptedSuffix = ".adopted-"

// keepAdopted links the file about to be adopted to
// <spool>.adopted-<unixnano>: replay trims the spool by writing a new file
// over its name, so the linked one keeps every line it held. It returns
// the link's path, or why there is none (the spool is adopted all the
// same: refusing it would stop the collector taking events). A copy that
// already names this file is kept instead of a second one; nothing removes
// the copies, so, as the torn lines, they share the bound MaxSize.
func (s *Spool) keepAdopted() (string, error) {
	fi, err := os.Lstat(s.path)
	if err != nil {
		return "", err
	}
	same, kept, n, err := s.adoptedCopies(fi)
	if err != nil {
		return "", fmt.Errorf("measure the copies kept beside it: %w", err)
	}
	if same != "" {
		return same, nil
	}
	if s.maxSize > 0 && kept+fi.Size() > s.maxSize {
		return "", fmt.Errorf("%w: %d bytes are kept in %d of them, this file has %d, the limit is %d",
			ErrAdoptedOverLimit, kept, n, fi.Size(), s.maxSize)
	}
	copyPath := fmt.Sprintf("%s%s%d", s.path, adoptedSuffix, time.Now().UnixNano())
	if err := os.Link(s.path, copyPath); err != nil {
		return "", err
	}
	if err := fsutil.SyncDir(filepath.Dir(s.path)); err != nil {
		return copyPath, err
	}
	return copyPath, nil
}

// adoptedCopies finds the regular files keepAdopted made beside the spool:
// the one that is the file fi describes (same), if any, and the bytes and
// number of the distinct files among them (links of one file count once).
func (s *Spool) adoptedCopies(fi os.FileInfo) (same string, bytes int64, n int, err error) {
	dir := filepath.Dir(s.path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", 0, 0, err
	}
	prefix := filepath.Base(s.path) + adoptedSuffix
	seen := map[[2]uint64]bool{}
	for _, e := range entries {
		if !isAdoptedCopy(e.Name(), prefix) {
			continue
		}
		cfi, err := e.Info()
		if errors.Is(err, os.ErrNotExist) || err == nil && !cfi.Mode().IsRegular() {
			continue // removed meanwhile, or not a copy
		}
		if err != nil {
			return "", 0, 0, err
		}
		if same == "" && os.SameFile(cfi, fi) {
			same = filepath.Join(dir, e.Name())
		}
		id := fileID(cfi)
		if !seen[id] {
			seen[id] = true
			bytes += cfi.Size()
		}
	}
	return same, bytes, len(seen), nil
}

// isAdoptedCopy says whether name is prefix followed by digits.
func isAdoptedCopy(name, prefix string) bool {
	ns, ok := strings.CutPrefix(name, prefix)
	return ok && ns != "" && strings.Trim(ns, "0123456789") == ""
}

// vet says why a whole line may not be sent, or "".
func (s *Spool) vet(ln lines.Line) string {
	if ln.TooLong {
		return fmt.Sprintf("longer than %d bytes", s.maxLine)
	}
	if s.check == nil {
		return ""
	}
	if err := s.check(ln.Bytes()); err != nil {
		return err.Error()
	}
	return ""
}
