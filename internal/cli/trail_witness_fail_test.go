package cli

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// A line edited in the newest segment of a witnessed trail: the summary
// said "witnessed=N" for the lines before it, while every segment's line,
// the first included, ended in "not witnessed". The segments within the
// prefix the witnesses vouch for say "witnessed", as the summary does.
func TestVerifyWitnessFailureKeepsTheWitnessedSegments(t *testing.T) {
	res, segs := verifyWitnessedEdited(t, -1)
	require.Regexp(t, regexp.MustCompile(`witness: lines=\d+ witnessed=[1-9]\d* `), res.stdout)
	require.Regexp(t, regexp.MustCompile(regexp.QuoteMeta(segs[0].Path)+`: integrity: lines 1-\d+ of the log are in checkpoint .*; witnessed\n`), res.stdout)
}
