package cli

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sandboxaudit/sandboxaudit/internal/webview"
)

// An offset at or past the end of the list, however large, is the
// request's mistake: a 400 naming the parameter, never a panic (offset
// plus limit must not wrap around) nor a page counting from a negative
// row.
func TestServeRefusesAnOffsetPastTheEnd(t *testing.T) {
	var evs []string
	for k := range 3 {
		s, f := op(sessionA, "exec", fmt.Sprintf("span-%d", k), int64(2*k+1), int64(2*k+2))
		evs = append(evs, canonLines(s, f))
	}
	p := writeFile(t, "events.jsonl", evs[0]+evs[1]+evs[2])
	hs := startView(t, webview.Config{Sources: []string{p}})
	session := "/session/" + sessionA.String()
	for _, path := range []string{
		"/?offset=9223372036854775807",
		"/?offset=9223372036854775000&limit=1000",
		"/?offset=1",
		session + "?offset=9223372036854775807",
		session + "?offset=3",
	} {
		code, _, body := get(t, hs.URL+path)
		assert.Equal(t, http.StatusBadRequest, code, path)
		assert.Contains(t, body, "offset:", path)
	}
	_, _, body := get(t, hs.URL+"/?offset=1")
	assert.Contains(t, body, "past the end of the list (1 row)")
	for _, path := range []string{"/?offset=0", session + "?offset=2"} {
		code, _, body := get(t, hs.URL+path)
		assert.Equal(t, http.StatusOK, code, "%s: %s", path, body)
	}
}
