package cli

import (
	"os"
	"path/filepath"
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

// `help verify` is `verify -h`, as in go and git: it printed the
// top-level usage. `help nosuch` is a usage error.
func TestHelpCommandIsItsHelp(t *testing.T) {
	for _, cmd := range commands() {
		want := run(t, "", append(cmd, "-h")...)
		got := run(t, "", append([]string{"help"}, cmd...)...)
		require.Equal(t, want, got, cmd)
	}
	res := run(t, "", "help", "nosuch")
	require.Equal(t, exitUsage, res.code)
	require.Contains(t, res.stderr, `unknown command "nosuch"`)
}

// The top-level usage names every flag each command takes, so a reader of
// `sandboxaudit -h` is not missing one that `<command> -h` lists.
func TestUsageNamesEveryFlag(t *testing.T) {
	top := run(t, "").stderr
	for _, cmd := range commands() {
		for _, f := range flagsOf(t, cmd) {
			if !strings.Contains(top, "--"+f+" ") && !strings.Contains(top, "--"+f+"]") {
				t.Errorf("the usage of %s does not name --%s", cmd, f)
			}
		}
	}
}

// commands are the CLI's commands and log's subcommands.
func commands() [][]string {
	return [][]string{
		{"canon"}, {"verify"}, {"log", "reset"}, {"log", "handover"}, {"log", "rebuild-store"},
		{"show"}, {"sessions"}, {"serve"}, {"keygen"}, {"prove"}, {"verify-proof"}, {"replay"},
	}
}

// flagsOf gives the flags a command's -h lists, without their dashes.
func flagsOf(t *testing.T, cmd []string) []string {
	t.Helper()
	res := run(t, "", append(cmd, "-h")...)
	var flags []string
	for _, f := range regexp.MustCompile(`(?m)^  -(\S+)`).FindAllStringSubmatch(res.stderr, -1) {
		flags = append(flags, f[1])
	}
	return flags
}

// Every flag a command takes is named, as --flag, in the README or
// docs/: a reader of the docs is not missing one that -h lists.
func TestDocsNameEveryFlag(t *testing.T) {
	root := filepath.Join("..", "..")
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	var text strings.Builder
	for _, p := range append(docs, filepath.Join(root, "README.md")) {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		text.Write(b)
	}
	for _, cmd := range commands() {
		for _, f := range flagsOf(t, cmd) {
			if !regexp.MustCompile(`--` + regexp.QuoteMeta(f) + `([^a-z0-9-]|$)`).MatchString(text.String()) {
				t.Errorf("neither README.md nor docs/ names %s --%s", strings.Join(cmd, " "), f)
			}
		}
	}
}
