package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
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

// docGrep is the --grep example of investigate.md's show commands, with
// the shell's single quotes taken off.
var docGrep = regexp.MustCompile(`(?m)^bin/sandboxaudit show --op exec --grep '([^']+)' audit/`)

// investigate.md's --grep example finds what it says: an exec whose
// argument list holds rm -rf, as the Python SDK and sandboxtrace write a
// command (a JSON list, so the line holds "rm","-rf" and the table rm -rf).
func TestDocGrepExampleFindsItsCommand(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "investigate.md"))
	require.NoError(t, err)
	m := docGrep.FindStringSubmatch(string(raw))
	require.NotNil(t, m, "investigate.md shows a show --op exec --grep example")
	rm, rmF := op(sessionA, "exec", "span-1", 1, 2)
	rm.Data = auditevent.MustParseData(`{"command":["rm","-rf","/workspace/build"],"shell":false}`)
	ls, lsF := op(sessionA, "exec", "span-2", 3, 4)
	ls.Data = auditevent.MustParseData(`{"command":["ls","-la"],"shell":false}`)
	p := writeFile(t, "events.jsonl", canonLines(rm, rmF, ls, lsF))
	r := run(t, "", "show", "--output", "jsonl", "--op", "exec", "--grep", m[1], p)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, canonLines(rm, rmF), r.stdout, "--grep %q", m[1])
}
