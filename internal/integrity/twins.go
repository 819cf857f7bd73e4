package integrity

import (
	"errors"
	"fmt"
	"os"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// twinProblem checks the plain copy a compressed segment may have beside
// it: a crash between the compressed copy's rename and the plain one's
// removal leaves both, and the collector removes the plain one at its next
// start. Until then a reader may open either, so the plain copy must hold
// exactly what the compressed one does; the compressed copy is the one the
// trail is checked with.
func twinProblem(s filesink.Segment) string {
	if !s.Compressed {
		return ""
	}
	fi, err := os.Lstat(s.Plain)
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil || !fi.Mode().IsRegular() {
		return fmt.Sprintf("%s: beside compressed segment %s, and not a regular file", s.Plain, s.Path)
	}
	same, err := filesink.SameAsCompressed(s.Plain, s.Path)
	if err != nil {
		return fmt.Sprintf("%s: %v", s.Plain, err)
	}
	if !same {
		return fmt.Sprintf("%s: a plain copy of compressed segment %s that differs from it: one of them was changed", s.Plain, s.Path)
	}
	return ""
}
