package cli

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/webview"
)

// A session's page lists its operations without their lines: what it
// allocates does not grow with the size of the lines (exec output kept by
// the policy), so a page of long lines cannot take the memory of every
// line it lists at once, per request.
func TestServeSessionPageDoesNotHoldTheLines(t *testing.T) {
	const ops, outBytes = 40, 1 << 20
	out := strings.Repeat("x", outBytes)
	var b strings.Builder
	for k := range ops {
		s, f := op(sessionA, "exec", fmt.Sprintf("span-%d", k), int64(2*k+1), int64(2*k+2))
		f.Stdout = &out
		b.WriteString(canonLines(s, f))
	}
	p := writeFile(t, "events.jsonl", b.String())
	hs := startView(t, webview.Config{Sources: []string{p}})
	url := hs.URL + "/session/" + sessionA.String() + "?limit=1000"
	code, _, body := get(t, url) // warm up: buffers, templates
	require.Equal(t, http.StatusOK, code, body)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	code, _, body = get(t, url)
	runtime.ReadMemStats(&after)
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, fmt.Sprintf(`/session/%s/op/%d`, sessionA, ops-1))
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, uint64(ops*outBytes/4), "a page of %d operations with %d-byte lines allocated %d bytes", ops, outBytes, allocated)
}

// A session's page lists its operations without their span and trace ids
// or exit codes, which it does not show: the receiver takes an id of
// megabytes, so a page of such operations would otherwise hold every id
// it lists at once, per request.
func TestServeSessionPageDoesNotHoldTheIDs(t *testing.T) {
	const ops, idBytes = 128, 128 << 10
	id, exit := strings.Repeat("s", idBytes), strings.Repeat("e", idBytes)
	var b strings.Builder
	for k := range ops {
		s, f := op(sessionA, "exec", fmt.Sprintf("%d-%s", k, id), int64(2*k+1), int64(2*k+2))
		f.Data = auditevent.MustParseData(`{"exit_code":"` + exit + `"}`)
		b.WriteString(canonLines(s, f))
	}
	p := writeFile(t, "events.jsonl", b.String())
	hs := startView(t, webview.Config{Sources: []string{p}})
	url := hs.URL + "/session/" + sessionA.String() + "?limit=1000"
	code, _, body := get(t, url) // warm up: buffers, templates
	require.Equal(t, http.StatusOK, code, body)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	code, _, body = get(t, url)
	runtime.ReadMemStats(&after)
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, fmt.Sprintf(`/session/%s/op/%d`, sessionA, ops-1))
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, uint64(ops*idBytes/4), "a page of %d operations with %d-byte ids and exit codes allocated %d bytes", ops, idBytes, allocated)
}
