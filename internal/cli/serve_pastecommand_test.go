package cli

import (
	"context"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/webview"
)

// The command an operation's page suggests for a long line is text an
// investigator pastes into a shell. A span id holding a quote must stay
// one argument once shown: showing doubles a backslash, so a quote
// escaped the usual way (quote, backslash, quote, quote) would show two
// backslashes and end the quoting, and the rest of the id would run as
// commands.
func TestServeSuggestedCommandKeepsAHostileSpanQuoted(t *testing.T) {
	dir := t.TempDir()
	span := "x'; touch INJECTED; '"
	s, f := op(sessionA, "exec", span, 1, 2)
	out := strings.Repeat("o", 1<<20+16)
	f.Stdout = &out
	p := writeFile(t, "events.jsonl", canonLines(s, f))
	hs := startView(t, webview.Config{Sources: []string{p}})

	code, _, body := get(t, hs.URL+"/session/"+sessionA.String()+"/op/0")
	require.Equal(t, 200, code)
	m := regexp.MustCompile(`<code>sandboxaudit (show [^<]*)</code>`).FindStringSubmatch(body)
	require.NotNil(t, m, "the page suggests a command")
	pasted := html.UnescapeString(m[1])

	// The shell reads the pasted arguments and prints them one a line.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", `printf '%s\n' `+pasted)
	cmd.Dir = dir
	got, err := cmd.Output()
	require.NoError(t, err, "%s", pasted)
	_, statErr := os.Stat(filepath.Join(dir, "INJECTED"))
	assert.True(t, os.IsNotExist(statErr), "the pasted command ran text from the trail: %s", pasted)
	assert.Equal(t, []string{"show", "--session", sessionA.String(), "--span", span, "--output", "jsonl", "PATH"},
		strings.Split(strings.TrimSuffix(string(got), "\n"), "\n"), "the span id is one argument")
}
