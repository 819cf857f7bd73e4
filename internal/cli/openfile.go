package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// openRegular opens name for reading as a regular file (fsutil.OpenRegular),
// telling the user how to give a pipe instead: as - on stdin.
func openRegular(name string) (*os.File, error) {
	f, _, err := fsutil.OpenRegular(name, os.O_RDONLY, 0)
	if errors.Is(err, fsutil.ErrNotRegular) {
		return nil, fmt.Errorf("%w; read a pipe as - from stdin", err)
	}
	return f, err
}
