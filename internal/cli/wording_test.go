package cli

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A count of one reads in the singular.
func TestVerifyOneUnsealedLineReadsSingular(t *testing.T) {
	path, _, pub, _ := rotatedFixture(t, 20)
	s, _ := op(sessionA, "exec", "f000000000000001", 9001, 9002)
	appendFlocked(t, path, canonLines(s))
	res := run(t, "", "verify", "--key", pub, filepath.Dir(path))
	require.Equal(t, exitProblems, res.code, res.stdout)
	require.Contains(t, res.stdout, ": integrity: 1 line after the newest checkpoint is not sealed (")
	require.NotRegexp(t, `[^=\w]1 lines[^=]`, res.stdout)
}
