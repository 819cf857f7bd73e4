package cli

import (
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/webview"
)

// numCell is a number cell of the session list: its title and text.
var numCell = regexp.MustCompile(`<td class="num[^"]*"(?: title="([^"]*)")?>([^<]*)</td>`)

// viewMissingCell is the Missing cell of id's row in the session list (the
// last number cell): its title and its text.
func viewMissingCell(t *testing.T, body string, id uuid.UUID) (title, text string) {
	t.Helper()
	at := strings.Index(body, ">"+id.String()+"</a>")
	require.GreaterOrEqual(t, at, 0, "row of %s", id)
	row := body[at:]
	row = row[:strings.Index(row, "</tr>")]
	cells := numCell.FindAllStringSubmatch(row, -1)
	require.Len(t, cells, 4, "operations, failures, open, missing: %s", row)
	return cells[3][1], cells[3][2]
}

func TestServeSessionsShowMissingSeqs(t *testing.T) {
	first, second := gapFiles(t)
	copies := filepath.Join(t.TempDir(), "copies.jsonl")
	writeAt(t, copies, opLines(sessionC, 1, 2)+opLines(sessionC, 1, 2, 3, 4)) // a copy is no hole
	paths := []string{first, second, copies}
	hs := startView(t, webview.Config{Sources: paths})

	code, _, body := get(t, hs.URL+"/")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `<a href="/?sort=missing">Missing</a>`)
	rows := sessionRows(t, paths...) // as sessions counts them
	require.Equal(t, 2.0, rows[sessionA.String()]["missing_seqs"])

	title, text := viewMissingCell(t, body, sessionA)
	assert.Equal(t, "2", text)
	assert.Equal(t, "seqs 5–6 not in the files read", title)
	for _, id := range []uuid.UUID{sessionB, sessionC} {
		title, text = viewMissingCell(t, body, id)
		assert.Empty(t, text, "%s misses no seq", id)
		assert.Empty(t, title, "%s misses no seq", id)
	}

	// The first file alone: B misses 3–4 there, A still 5–6.
	hs = startView(t, webview.Config{Sources: []string{first}})
	code, _, body = get(t, hs.URL+"/?sort=missing&desc=1")
	require.Equal(t, http.StatusOK, code)
	title, text = viewMissingCell(t, body, sessionB)
	assert.Equal(t, "2", text)
	assert.Equal(t, "seqs 3–4 not in the files read", title)
}

func TestServeSessionsMissingTitleNamesTheRest(t *testing.T) {
	// Seqs 2, 4, …, 20 missing: ten ranges, more than a session keeps.
	var seqs []int64
	for s := int64(1); s <= 21; s += 2 {
		seqs = append(seqs, s)
	}
	p := filepath.Join(t.TempDir(), "holes.jsonl")
	writeAt(t, p, opLines(sessionA, seqs...)) // pairs (1,3), (5,7), …, (17,19); 21 unpaired is left out
	hs := startView(t, webview.Config{Sources: []string{p}})
	code, _, body := get(t, hs.URL+"/")
	require.Equal(t, http.StatusOK, code)
	title, text := viewMissingCell(t, body, sessionA)
	assert.Equal(t, "9", text)
	assert.Equal(t, "seqs 2, 4, 6, 8, 10 and 4 more (9 in all) not in the files read", title)
}

// sessionMissing is the session page's sentence on missing seqs ("" when
// it has none).
var sessionMissing = regexp.MustCompile(`<p class="summary missing">([^<]*)</p>`)

func viewSessionMissing(t *testing.T, base string, id uuid.UUID) string {
	t.Helper()
	code, _, body := get(t, base+"/session/"+id.String())
	require.Equal(t, http.StatusOK, code)
	m := sessionMissing.FindAllStringSubmatch(body, -1)
	require.LessOrEqual(t, len(m), 1, body)
	if len(m) == 0 {
		return ""
	}
	return m[0][1]
}

func TestServeSessionPageShowsMissingSeqs(t *testing.T) {
	first, second := gapFiles(t)
	copies := filepath.Join(t.TempDir(), "copies.jsonl")
	writeAt(t, copies, opLines(sessionC, 1, 2)+opLines(sessionC, 1, 2, 3, 4)) // a copy is no hole
	paths := []string{first, second, copies}
	hs := startView(t, webview.Config{Sources: paths})
	rows := sessionRows(t, paths...) // as sessions counts them
	require.Equal(t, 2.0, rows[sessionA.String()]["missing_seqs"])

	assert.Equal(t, "2 seqs missing: 5–6, not in the files read.", viewSessionMissing(t, hs.URL, sessionA))
	assert.Empty(t, viewSessionMissing(t, hs.URL, sessionB), "B misses no seq with both files")
	assert.Empty(t, viewSessionMissing(t, hs.URL, sessionC), "C misses no seq")

	hs = startView(t, webview.Config{Sources: []string{second}})
	rows = sessionRows(t, second)
	require.Equal(t, 4.0, rows[sessionB.String()]["missing_seqs"])
	assert.Equal(t, "4 seqs missing: 1–2, 5–6, not in the files read.", viewSessionMissing(t, hs.URL, sessionB))
}

func TestServeSessionPageNamesTheRestOfItsMissingSeqs(t *testing.T) {
	var seqs []int64
	for s := int64(1); s <= 21; s += 2 {
		seqs = append(seqs, s)
	}
	p := filepath.Join(t.TempDir(), "holes.jsonl")
	writeAt(t, p, opLines(sessionA, seqs...)+opLines(sessionB, 1, 3))
	hs := startView(t, webview.Config{Sources: []string{p}})
	assert.Equal(t, "9 seqs missing: 2, 4, 6, 8, 10 and 4 more (9 in all), not in the files read.", viewSessionMissing(t, hs.URL, sessionA))
	assert.Equal(t, "1 seq missing: 2, not in the files read.", viewSessionMissing(t, hs.URL, sessionB))
}
