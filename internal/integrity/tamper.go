package integrity

import (
	"errors"
	"fmt"
)

// ErrTampered marks every finding that an audit file, its hash store and
// its checkpoints disagree. The sealer never seals over such a file: only
// a person can tell an attack from a mistake, and sealing would make the
// change look legitimate.
var ErrTampered = errors.New("integrity check failed")

// TamperError says what disagreed, and where.
type TamperError struct {
	Path   string
	Detail string
}

func (e *TamperError) Error() string {
	return fmt.Sprintf("%s: %v: %s (not sealed; keep the file and its .tlog and .checkpoints sidecars for inspection)",
		e.Path, ErrTampered, e.Detail)
}

func (e *TamperError) Unwrap() error { return ErrTampered }

func tampered(path, format string, args ...any) error {
	return &TamperError{Path: path, Detail: fmt.Sprintf(format, args...)}
}
