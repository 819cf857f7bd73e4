package auditevent

import "testing"

// internOp and internErrorCode find every name of their list, as itself,
// and nothing else: not a prefix, a longer word or another case.
func TestInternNames(t *testing.T) {
	for _, list := range []struct {
		names  []string
		intern func([]byte) (string, bool)
	}{{opNames[:], internOp}, {errorCodes[:], internErrorCode}} {
		for _, n := range list.names {
			if got, ok := list.intern([]byte(n)); !ok || got != n {
				t.Errorf("intern(%q) = %q, %v", n, got, ok)
			}
			for _, bad := range []string{n[:len(n)-1], n + "s", "X" + n[1:], n[:len(n)-1] + "X", ""} {
				if got, ok := list.intern([]byte(bad)); ok {
					t.Errorf("intern(%q) = %q, want no name", bad, got)
				}
			}
		}
	}
}
