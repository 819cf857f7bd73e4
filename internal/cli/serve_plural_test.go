package cli

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/webview"
)

// The pages' counts are worded as the commands word them: "1 operation",
// "2 operations", not "operation(s)".
func TestServeWordsCountsSingularOrPlural(t *testing.T) {
	s1, f1 := op(sessionA, "exec", "span-1", 1, 2)
	s2, f2 := op(sessionA, "exec", "span-2", 3, 4)
	one := writeFile(t, "one.jsonl", canonLines(s1, f1)+"not an event\n")
	two := writeFile(t, "two.jsonl", canonLines(s1, f1, s2, f2))
	for _, c := range []struct {
		src  string
		want []string
	}{
		{one, []string{"1 session, 1 operation:", "1 line is not an audit event", "read-only view of 1 source<"}},
		{two, []string{"1 session, 2 operations:", "read-only view of 1 source<"}},
	} {
		hs := startView(t, webview.Config{Sources: []string{c.src}})
		code, _, body := get(t, hs.URL+"/")
		require.Equal(t, 200, code)
		for _, w := range c.want {
			assert.Contains(t, body, w)
		}
		assert.NotContains(t, body, "(s)")
		_, _, body = get(t, hs.URL+"/session/"+sessionA.String())
		assert.NotContains(t, body, "(s)")
	}
}

// The sealed lines of a file are worded as verify words them. A file of
// one sealed line says "line 1 of 1 is sealed", not "lines 1-1"; a file
// whose only checkpoint signs no line yet (signed when the file was made,
// the collector stopped before its next round) says no line is sealed,
// not "lines 1-0".
func TestServeWordsSealedLines(t *testing.T) {
	s1, _ := op(sessionA, "exec", "a000000000000001", 1, 2)
	for _, c := range []struct {
		name          string
		before, after string // the file's lines before the seal, and after it
		want, notWant string
	}{
		{"one", canonLines(s1), "", "through checkpoint #1: line 1 of 1 is sealed", "lines 1-1"},
		{"none", "", canonLines(s1), "through checkpoint #1: no line of 1 is sealed; the 1 line after it is not sealed yet", "lines 1-0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			res := run(t, "", "keygen", "--name", c.name, "--out", dir)
			require.Equal(t, 0, res.code, res.stderr)
			keys, err := integrity.LoadSigningKey(filepath.Join(dir, c.name+".key"))
			require.NoError(t, err)
			path := filepath.Join(dir, "audit.jsonl")
			appendFlocked(t, path, c.before)
			sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: 1e9})
			require.NoError(t, err)
			require.NoError(t, sealer.Seal(context.Background(), path))
			require.NoError(t, sealer.Close(context.Background()))
			if c.after != "" {
				appendFlocked(t, path, c.after)
			}
			key, err := integrity.LoadVerifierKey(filepath.Join(dir, c.name+".pub"))
			require.NoError(t, err)

			hs := startView(t, webview.Config{Sources: []string{path}, Key: key})
			_, _, body := get(t, hs.URL+"/")
			assert.Contains(t, body, c.want)
			assert.NotContains(t, body, c.notWant)
		})
	}
}
