package auditevent

import "testing"

// IsOp's switch and opNames name the same operations: every name is one,
// and nothing else of theirs (a prefix, a longer word, another case) is.
func TestIsOpIsOpNames(t *testing.T) {
	for _, op := range opNames {
		if !IsOp(op) {
			t.Errorf("IsOp(%q) = false for a name of opNames", op)
		}
		for _, other := range []string{op[:len(op)-1], op + "s", " " + op, "X" + op[1:]} {
			known := false
			for _, o := range opNames {
				known = known || o == other
			}
			if IsOp(other) != known {
				t.Errorf("IsOp(%q) = %v, want %v", other, !known, known)
			}
		}
	}
	if IsOp("") {
		t.Error(`IsOp("") = true`)
	}
}
