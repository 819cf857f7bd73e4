package sandboxaudit

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// skippedDir reports whether a walk of the repository passes over the
// directory at p: hidden ones and bin/ (build output), and testdata/
// unless withTestdata.
func skippedDir(p string, d os.DirEntry, withTestdata bool) bool {
	return d.IsDir() && p != "." && (strings.HasPrefix(d.Name(), ".") || p == "bin" || !withTestdata && d.Name() == "testdata")
}

// docFiles lists the markdown a newcomer reads: every .md file of the
// repository (README, docs/, component READMEs and documentation.md,
// bench/RESULTS.md, testdata's notes). CHANGELOG.md is left out: its entries
// describe the tree as it was on their date.
func docFiles(t *testing.T) []string {
	t.Helper()
	return slices.DeleteFunc(repoFiles(t, ".md", true), func(p string) bool { return p == "CHANGELOG.md" })
}

// repoFiles lists the files of the repository whose names end in suffix,
// in the directories a walk does not pass over (skippedDir).
func repoFiles(t *testing.T, suffix string, withTestdata bool) []string {
	t.Helper()
	var files []string
	require.NoError(t, filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case skippedDir(p, d, withTestdata):
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(p, suffix):
			files = append(files, p)
		}
		return nil
	}))
	return files
}

var (
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdFence    = regexp.MustCompile("(?m)^ {0,3}```")
	mdCodeSpan = regexp.MustCompile("`[^`\n]*`")
	mdHeading  = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *#* *$`)
)

// unfenced gives the parts of text outside fenced code blocks.
func unfenced(text string) []string {
	parts := mdFence.Split(text, -1)
	var out []string
	for i := 0; i < len(parts); i += 2 {
		out = append(out, parts[i])
	}
	return out
}

// proseOf drops fenced code blocks and code spans, where brackets and
// parentheses are code, not links.
func proseOf(text string) string {
	var b strings.Builder
	for _, part := range unfenced(text) {
		b.WriteString(mdCodeSpan.ReplaceAllString(part, ""))
	}
	return b.String()
}

// anchorsOf gives the heading anchors GitHub makes for a markdown file:
// lower case, punctuation dropped, spaces as hyphens, repeats numbered.
func anchorsOf(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, part := range unfenced(text) {
		for _, m := range mdHeading.FindAllStringSubmatch(part, -1) {
			slug := slugOf(m[1])
			if n := seen[slug]; n > 0 {
				anchors[slug+"-"+strconv.Itoa(n)] = true
			} else {
				anchors[slug] = true
			}
			seen[slug]++
		}
	}
	return anchors
}

func slugOf(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestDocLinksResolve checks that every relative link in the docs names a
// file or directory inside the repository and, with a #fragment into a markdown
// file, one of its headings.
func TestDocLinksResolve(t *testing.T) {
	files := docFiles(t)
	require.Greater(t, len(files), 10, "README, docs/ and the component READMEs")
	for _, file := range files {
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, m := range mdLink.FindAllStringSubmatch(proseOf(string(raw)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			resolved := file
			if path != "" {
				resolved = filepath.Join(filepath.Dir(file), path)
			}
			// A file beside the checkout (../shared) is not in a clone.
			if !assert.True(t, filepath.IsLocal(resolved), "%s: link %q: outside the repository", file, target) {
				continue
			}
			info, err := os.Stat(resolved)
			if !assert.NoError(t, err, "%s: link %q: no such file", file, target) {
				continue
			}
			if frag == "" {
				continue
			}
			if !assert.True(t, !info.IsDir() && strings.HasSuffix(resolved, ".md"),
				"%s: link %q: an anchor into something other than a markdown file", file, target) {
				continue
			}
			body, err := os.ReadFile(resolved)
			require.NoError(t, err)
			assert.True(t, anchorsOf(string(body))[frag], "%s: link %q: %s has no heading #%s", file, target, resolved, frag)
		}
	}
}

func TestSlugOf(t *testing.T) {
	for heading, want := range map[string]string{
		"Quick start": "quick-start",
		"Over Kafka":  "over-kafka",
		"keygen, prove, verify-proof: signing keys and proofs": "keygen-prove-verify-proof-signing-keys-and-proofs",
		"`show`: what did a session do?":                       "show-what-did-a-session-do",
		"From a trace to its lines, and back":                  "from-a-trace-to-its-lines-and-back",
	} {
		assert.Equal(t, want, slugOf(heading), heading)
	}
	assert.Equal(t, map[string]bool{"a": true, "a-1": true, "b": true},
		anchorsOf("# A\n```\n# not a heading\n```\n## A\n### B\n"))
}

// docCitation is how a Go comment points a reader at a doc's section:
// `docs/format.md, "Inside the collector"`, the path from the repository's
// root or from the package's directory (a bare README is the package's
// README.md). A comment's line breaks are read as spaces first, since a
// citation may wrap.
var (
	docCitation  = regexp.MustCompile(`((?:[\w.-]+/)*[\w.-]+\.md|README),? "([^"]+)"`)
	commentBreak = regexp.MustCompile(`\n\s*// ?`)
)

// headingsOf gives a markdown file's headings as written.
func headingsOf(text string) map[string]bool {
	headings := map[string]bool{}
	for _, part := range unfenced(text) {
		for _, m := range mdHeading.FindAllStringSubmatch(part, -1) {
			headings[m[1]] = true
		}
	}
	return headings
}

// TestCodeCitesDocHeadingsThatExist checks that every section a Go comment
// cites (bench/ and tools/ included) is a heading of that doc, word for word,
// so a reader sent there from the code finds it.
func TestCodeCitesDocHeadingsThatExist(t *testing.T) {
	cited := 0
	for _, p := range repoFiles(t, ".go", false) {
		src, err := os.ReadFile(p)
		require.NoError(t, err)
		for _, m := range docCitation.FindAllStringSubmatch(commentBreak.ReplaceAllString(string(src), " "), -1) {
			cited++
			name := strings.TrimSuffix(m[1], ".md") + ".md"
			doc := filepath.Join(filepath.Dir(p), name)
			if _, err := os.Stat(doc); err != nil {
				doc = name
			}
			body, err := os.ReadFile(doc)
			if !assert.NoError(t, err, "%s cites %s, which is not in the repository", p, m[1]) {
				continue
			}
			assert.True(t, headingsOf(string(body))[m[2]], "%s cites %s, %q: no such heading", p, m[1], m[2])
		}
	}
	require.Greater(t, cited, 10, "the code cites docs/format.md's sections, among others")
}
