package sandboxaudit

import (
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readingWPM is a fair reading speed for technical prose, in words a
// minute.
const readingWPM = 230

// TestREADMEReadsInFiveMinutes holds the README to what a newcomer reads in
// five minutes, code blocks included: detail belongs in docs/, linked.
func TestREADMEReadsInFiveMinutes(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	require.NoError(t, err)
	words := len(strings.Fields(string(raw)))
	assert.LessOrEqual(t, words, 5*readingWPM,
		"README.md has %d words, %.1f minutes at %d words a minute: move detail into docs/ and link it",
		words, float64(words)/readingWPM, readingWPM)
}

// layoutEntry is a directory docs/layout.md names in a table's first
// column: `exporter/`, or a pattern such as `*/internal/metadata/`.
var layoutEntry = regexp.MustCompile("(?m)^\\| `([^`]*/)` \\|")

// goDirs lists the directories of the main module that hold Go files:
// what `go list ./...` lists, found without the go command. A directory
// with its own go.mod (bench/, tools/jaeger/) is another module.
func goDirs(t *testing.T) []string {
	t.Helper()
	found := map[string]bool{}
	require.NoError(t, filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case skippedDir(p, d, false):
			return filepath.SkipDir
		case d.IsDir() && p != ".":
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		case strings.HasSuffix(p, ".go"):
			found[filepath.Dir(p)] = true
		}
		return nil
	}))
	return slices.Sorted(maps.Keys(found))
}

// TestLayoutNamesEveryPackage checks docs/layout.md, the map of the tree,
// against the tree: every directory with Go code is named (itself, or by a
// pattern), and every name is a directory that is there.
func TestLayoutNamesEveryPackage(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("docs", "layout.md"))
	require.NoError(t, err)
	var entries []string
	for _, m := range layoutEntry.FindAllStringSubmatch(string(raw), -1) {
		entries = append(entries, strings.TrimSuffix(m[1], "/"))
	}
	require.NotEmpty(t, entries, "docs/layout.md has tables of `dir/` rows")
	for _, dir := range goDirs(t) {
		assert.True(t, slices.ContainsFunc(entries, func(e string) bool {
			ok, err := path.Match(e, filepath.ToSlash(dir))
			return err == nil && ok
		}), "docs/layout.md does not name %s/", dir)
	}
	for _, e := range entries {
		matches, err := filepath.Glob(e)
		require.NoError(t, err, e)
		assert.True(t, slices.ContainsFunc(matches, func(m string) bool {
			info, err := os.Stat(m)
			return err == nil && info.IsDir()
		}), "docs/layout.md names %s/, which is not a directory", e)
	}
}

var (
	docTestName = regexp.MustCompile("`((?:Test|Benchmark|Fuzz)[A-Za-z0-9_]+)")
	testFunc    = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)[A-Za-z0-9_]+)\(`)
)

// TestDocsNameTestsThatExist checks that a test, benchmark or fuzz target
// the docs name (to run it, or as what guards a promise) is a function of
// some _test.go file, bench/'s module included.
func TestDocsNameTestsThatExist(t *testing.T) {
	funcs := map[string]bool{}
	for _, p := range repoFiles(t, "_test.go", true) {
		src, err := os.ReadFile(p)
		require.NoError(t, err)
		for _, m := range testFunc.FindAllStringSubmatch(string(src), -1) {
			funcs[m[1]] = true
		}
	}
	named := 0
	for _, file := range docFiles(t) {
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, m := range docTestName.FindAllStringSubmatch(string(raw), -1) {
			named++
			assert.True(t, funcs[m[1]], "%s names %s, which no _test.go defines", file, m[1])
		}
	}
	require.Greater(t, named, 10, "docs/development.md names the docs' tests")
}
