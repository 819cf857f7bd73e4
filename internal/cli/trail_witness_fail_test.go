package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// A line edited in the newest segment of a witnessed trail: the summary
// said "witnessed=N" for the lines before it, while every segment's line,
// the first included, ended in "not witnessed". The segments within the
// prefix the witnesses vouch for say "witnessed", as the summary does.
func TestVerifyWitnessFailureKeepsTheWitnessedSegments(t *testing.T) {
	dir := t.TempDir()
	sealer, pub, vkey, _ := oneWitnessSealer(t, dir)
	path, segs := sealedRotatedTrail(t, dir, sealer, filesink.Rotation{MaxBytes: 2 << 10})
	require.Greater(t, len(segs), 3)
	seg := segs[len(segs)-1]
	data, err := os.ReadFile(seg.Path)
	require.NoError(t, err)
	edited := bytes.Replace(data, []byte(`"exec"`), []byte(`"read"`), 1)
	require.NotEqual(t, data, edited)
	require.NoError(t, os.WriteFile(seg.Path, edited, 0o600))

	res := run(t, "", "verify", "--key", pub, "--witness", vkey, filepath.Dir(path))
	require.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
	require.Regexp(t, regexp.MustCompile(`witness: lines=\d+ witnessed=[1-9]\d* `), res.stdout)
	require.Regexp(t, regexp.MustCompile(regexp.QuoteMeta(segs[0].Path)+`: integrity: lines 1-\d+ of the log are in checkpoint .*; witnessed\n`), res.stdout)
}
