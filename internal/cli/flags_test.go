package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A flag that takes one value, given twice, is refused: the flag package
// would keep the last silently, and replay would send the spool, then trim
// it, to whichever endpoint came last. The values are not echoed (an
// endpoint may hold a password).
func TestFlagsGivenTwiceAreRefused(t *testing.T) {
	spool, _ := spoolFixture(t)
	for _, args := range [][]string{
		{"replay", spool, "--endpoint", "http://u:SECRET@127.0.0.1:1/a", "--endpoint=http://127.0.0.1:1/b"},
		{"replay", "--adopt", spool, "-adopt", "--endpoint", "http://127.0.0.1:1/a"},
		{"replay", spool, "--endpoint", "http://127.0.0.1:1/a", "--timeout", "1s", "--timeout", "2s"},
		{"keygen", "--name", "a", "--out", t.TempDir(), "--name", "b"},
		{"prove", spool, "--line", "1", "-line=2"},
		{"verify-proof", "--key", "a.pub", "--key", "b.pub", "-"},
	} {
		res := run(t, "", args...)
		require.Equal(t, exitUsage, res.code, "%v: %s", args, res.stderr)
		require.Contains(t, res.stderr, "given more than once", "%v", args)
		require.NotContains(t, res.stderr, "SECRET")
	}
	// A value that looks like a flag is the value, and a repeatable flag
	// repeats.
	res := run(t, "", "replay", spool, "--header", "--endpoint=x", "--header", "A=b", "--endpoint", "http://127.0.0.1:1/a", "--retry-for", "0")
	require.NotContains(t, res.stderr, "given more than once")
}

// A duration without a unit is refused saying what one looks like, not
// only "parse error".
func TestDurationFlagsSayWhatADurationIs(t *testing.T) {
	spool, _ := spoolFixture(t)
	for _, flag := range []string{"--timeout", "--retry-for"} {
		res := run(t, "", "replay", spool, "--endpoint", "http://127.0.0.1:1/a", flag, "10")
		require.Equal(t, exitUsage, res.code, res.stderr)
		require.Contains(t, res.stderr, `invalid value "10" for flag `+flag[1:]+`: a duration needs a unit, like 10s, 2m or 1h30m`)
	}
	res := run(t, "", "replay", "-h")
	require.Contains(t, res.stderr, "-timeout duration")
	require.Contains(t, res.stderr, "(default 10s)")
}
