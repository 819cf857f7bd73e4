package spool

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sandboxaudit/sandboxaudit/internal/lines"
)

// adoptIfValid takes a file with lines and no sidecar as a spool when each
// of its whole lines passes Check: a spool whose sidecar was lost, to be
// replayed from its start. A torn last line is left to Open's recovery.
// Anything else (an audit file with integrity fields, a log, a line that
// fails) is refused with ErrNotASpool, naming the first line that failed.
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
