package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// countedCut is a string, what it becomes and how many cuts that takes.
type countedCut struct {
	in, want string
	cuts     int
}

// assertCountedCuts redacts each case, checks the text and the number of
// cuts, and that the result has nothing left to cut.
func assertCountedCuts(t *testing.T, r *Redactor, cases []countedCut) {
	t.Helper()
	for _, tc := range cases {
		var c Counts
		got, _ := r.String(tc.in, &c)
		assert.Equal(t, tc.want, got)
		assert.Equal(t, tc.cuts, c.Total(), "%q: counts %v", tc.in, c)
		_, changed := r.String(got, nil)
		assert.False(t, changed, "idempotent: %q", got)
	}
}

// assertKept checks that redaction leaves each string as it is.
func assertKept(t *testing.T, r *Redactor, ins ...string) {
	t.Helper()
	for _, s := range ins {
		got, changed := r.String(s, nil)
		assert.False(t, changed, "%q became %q", s, got)
	}
}
