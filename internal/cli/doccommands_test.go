package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// docCommand is a CLI command line a doc shows: `sandboxaudit` (or
// bin/sandboxaudit), a command, and its arguments up to the end of the
// line, the end of the inline code or a shell comment.
var docCommand = regexp.MustCompile("sandboxaudit ((?:log )?[a-z-]+)([^\n`#|]*)")

// docFlag is a flag as a doc writes it, without its dashes or value.
var docFlag = regexp.MustCompile(`(?:^|\s)--([a-z][a-z0-9-]*)`)

// userDocs are the docs a user reads: the README, docs/ and the
// components' READMEs.
func userDocs(t *testing.T) []string {
	t.Helper()
	root := filepath.Join("..", "..")
	var files []string
	for _, pattern := range []string{"README.md", filepath.Join("docs", "*.md"), filepath.Join("*", "README.md")} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		require.NoError(t, err)
		files = append(files, m...)
	}
	return files
}

// Every flag a doc gives a CLI command is one that command takes: a
// reader who copies the command is not told "flag provided but not
// defined". TestDocsNameEveryFlag checks the other way round.
func TestDocCommandsUseFlagsThatExist(t *testing.T) {
	flags := map[string][]string{}
	for _, cmd := range commands() {
		flags[strings.Join(cmd, " ")] = flagsOf(t, cmd)
	}
	checked := 0
	for _, file := range userDocs(t) {
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		// A shell line ending in a backslash goes on on the next line.
		text := strings.ReplaceAll(string(raw), "\\\n", " ")
		for _, m := range docCommand.FindAllStringSubmatch(text, -1) {
			known, ok := flags[m[1]]
			if !ok {
				continue // prose: "sandboxaudit log commands"
			}
			for _, f := range docFlag.FindAllStringSubmatch(m[2], -1) {
				checked++
				if !slices.Contains(known, f[1]) {
					t.Errorf("%s: sandboxaudit %s has no flag --%s: %q", file, m[1], f[1], strings.TrimSpace(m[0]))
				}
			}
		}
	}
	require.Greater(t, checked, 50, "the docs' CLI command lines")
}
