package fsutil

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// OpenFileLimit returns the process's soft RLIMIT_NOFILE, the most
// descriptors it can hold open at once. Go raises the soft limit to the
// hard one when the process starts (os package init), so this is what the
// process has, not what the shell's `ulimit -n` showed.
func OpenFileLimit() (uint64, error) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("getrlimit(RLIMIT_NOFILE): %w", err)
	}
	return lim.Cur, nil
}
