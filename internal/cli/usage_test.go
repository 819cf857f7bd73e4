package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each flag a command's help calls repeatable is shown as repeatable, in
// one style, [--flag VALUE]... (--flag VALUE... would read as one flag
// taking several values), in the command's synopsis and in the top-level
// usage.
func TestUsageShowsRepeatableFlags(t *testing.T) {
	top := run(t, "").stderr
	for _, cmd := range [][]string{{"verify"}, {"replay"}, {"log", "handover"}} {
		res := run(t, "", append(cmd, "-h")...)
		synopsis, help, ok := strings.Cut(res.stderr, "\n")
		require.True(t, ok, res.stderr)
		flags := regexp.MustCompile(`(?m)^  -(\S+)[^\n]*\n((?:\s{4,}\t?[^\n]*\n)+)`).FindAllStringSubmatch(help, -1)
		require.NotEmpty(t, flags, res.stderr)
		seen := 0
		for _, f := range flags {
			if !strings.Contains(f[2], "repeatable") {
				continue
			}
			seen++
			shown := regexp.MustCompile(`\[--` + regexp.QuoteMeta(f[1]) + ` [^\s\]]+\]\.\.\.`)
			require.Regexp(t, shown, synopsis, "%s -h", cmd)
			require.Regexp(t, shown, top, "the usage of %s", cmd)
		}
		require.NotZero(t, seen, "%s has a repeatable flag", cmd)
		require.NotRegexp(t, otherStyle, synopsis, "%s -h", cmd)
	}
	require.NotRegexp(t, otherStyle, top)
}

// otherStyle is a flag whose value is followed by "...".
var otherStyle = regexp.MustCompile(`--[^\s\]]+ [^\s\]]+\.\.\.`)

// `log -h` is help asked for, as each command's -h: exit 0. `log` alone, or
// an unknown subcommand, is a usage error.
func TestLogHelpExitsZero(t *testing.T) {
	res := run(t, "", "log", "-h")
	require.Equal(t, exitOK, res.code, res.stderr)
	require.Contains(t, res.stderr, "sandboxaudit log handover")
	require.Equal(t, exitUsage, run(t, "", "log").code)
	require.Equal(t, exitUsage, run(t, "", "log", "nosuch").code)
}

// The top-level usage names every flag each command takes, so a reader of
// `sandboxaudit -h` is not missing one that `<command> -h` lists.
func TestUsageNamesEveryFlag(t *testing.T) {
	top := run(t, "").stderr
	for _, cmd := range [][]string{
		{"canon"}, {"verify"}, {"log", "reset"}, {"log", "handover"}, {"log", "rebuild-store"},
		{"show"}, {"sessions"}, {"serve"}, {"keygen"}, {"prove"}, {"verify-proof"}, {"replay"},
	} {
		res := run(t, "", append(cmd, "-h")...)
		for _, f := range regexp.MustCompile(`(?m)^  -(\S+)`).FindAllStringSubmatch(res.stderr, -1) {
			if !strings.Contains(top, "--"+f[1]+" ") && !strings.Contains(top, "--"+f[1]+"]") {
				t.Errorf("the usage of %s does not name --%s", cmd, f[1])
			}
		}
	}
}
