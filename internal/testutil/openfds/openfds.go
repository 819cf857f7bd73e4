// Package openfds counts the descriptors a test's process holds open.
package openfds // import "github.com/sandboxaudit/sandboxaudit/internal/testutil/openfds"

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Under counts this process's descriptors pointing below dir (a removed
// file's too), read from /proc so the check does not trust the code's own
// bookkeeping. It skips the test where /proc/self/fd cannot be listed.
func Under(t testing.TB, dir string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot list /proc/self/fd: %v", err)
	}
	n := 0
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) {
			n++
		}
	}
	return n
}
