package spool

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
		return fmt.Errorf("spool %s: %w", s.path, err)
	}
	defer func() { _ = f.Close() }()
	lr := lines.NewReader(f, readBufferSize, s.maxLine)
	var off int64
	for {
		ln, err := lr.Next()
		if errors.Is(err, io.EOF) || err == nil && !ln.Newline {
			s.recovery.Adopted = true
			s.recovery.AdoptedKept, s.recovery.AdoptedKeptErr = s.keepAdopted()
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

// keepAdopted links the file about to be adopted to
// <spool>.adopted-<unixnano>: replay trims the spool by writing a new file
// over its name, so the linked one keeps every line it held. It returns
// the link's path, or why there is none (the spool is adopted all the
// same: refusing it would stop the collector taking events).
func (s *Spool) keepAdopted() (string, error) {
	kept := fmt.Sprintf("%s.adopted-%d", s.path, time.Now().UnixNano())
	if err := os.Link(s.path, kept); err != nil {
		return "", err
	}
	if err := fsutil.SyncDir(filepath.Dir(s.path)); err != nil {
		return kept, err
	}
	return kept, nil
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
