package spool

import (
	"errors"
	"io/fs"
	"strings"
)

// pathError is err after what and path, naming path once. An
// *fs.PathError of path inside err gives only its operation and cause
// ("open: permission denied"), and a text err begins with path ("<path>
// is a symlink, which the spool does not follow") follows what with no
// colon: openFile's errors name the path they are about, and the callers
// that say what the file is named it again.
func pathError(what, path string, err error) error {
	text := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		text = strings.Replace(text, pe.Error(), pe.Op+": "+pe.Err.Error(), 1)
	}
	if rest, ok := strings.CutPrefix(text, path+" "); ok {
		return &namedError{text: what + " " + path + " " + rest, err: err}
	}
	return &namedError{text: what + " " + path + ": " + text, err: err}
}

// namedError is an error worded anew (pathError) that still wraps the
// error it words, so errors.Is finds its cause.
type namedError struct {
	text string
	err  error
}

func (e *namedError) Error() string { return e.text }
func (e *namedError) Unwrap() error { return e.err }
