// Package immutable makes a test's file one that cannot be removed, as
// chattr +i does: the failure an operator meets, made real.
package immutable // import "github.com/sandboxaudit/sandboxaudit/internal/testutil/immutable"

import "testing"

// Set makes file immutable and returns what undoes it, once (the test's
// cleanup undoes it too, before t.TempDir's removal when registered after
// it); false where this process may not (not root, no
// CAP_LINUX_IMMUTABLE, a file system without the flag, not Linux).
func Set(t testing.TB, file string) (undo func(), ok bool) {
	t.Helper()
	if err := setFlag(file, true); err != nil {
		return nil, false
	}
	done := false
	undo = func() {
		if done {
			return
		}
		done = true
		if err := setFlag(file, false); err != nil {
			t.Errorf("clear the immutable flag of %s: %v", file, err)
		}
	}
	t.Cleanup(undo)
	return undo, true
}
