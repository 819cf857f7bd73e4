package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/google/uuid"
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
	allocated := sessionPageAlloc(t, b.String(), ops)
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
	allocated := sessionPageAlloc(t, b.String(), ops)
	assert.Less(t, allocated, uint64(ops*idBytes/4), "a page of %d operations with %d-byte ids and exit codes allocated %d bytes", ops, idBytes, allocated)
}

// sessionPageAlloc serves the trail text, whose session sessionA has ops
// operations, and returns the bytes one request for the session's page
// allocates once a first request has warmed the buffers and templates.
func sessionPageAlloc(t *testing.T, text string, ops int) uint64 {
	t.Helper()
	p := writeFile(t, "events.jsonl", text)
	hs := startView(t, webview.Config{Sources: []string{p}})
	url := hs.URL + "/session/" + sessionA.String() + "?limit=1000"
	code, _, body := get(t, url)
	require.Equal(t, http.StatusOK, code, body)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	code, _, body = get(t, url)
	runtime.ReadMemStats(&after)
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, fmt.Sprintf(`/session/%s/op/%d`, sessionA, ops-1))
	return after.TotalAlloc - before.TotalAlloc
}

// The view keeps one entry per session, and that entry does not grow with
// the session's trace id (the receiver takes an id of megabytes): a trail
// of many sessions, each with a long id, cannot take memory in proportion
// to the trail. The page still cuts the id visibly, and tells a second
// trace that differs only past the cut from the first.
func TestServeSessionsDoNotHoldLongTraceIDs(t *testing.T) {
	const sessions, idBytes = 64, 256 << 10
	var b strings.Builder
	for k := range sessions {
		s, f := op(uuid.NewSHA1(sessionA, []byte{byte(k)}), "exec", "span", 1, 2)
		trace := strings.Repeat("t", idBytes) + fmt.Sprint(k)
		s.TraceID, f.TraceID = &trace, &trace
		b.WriteString(canonLines(s, f))
	}
	s, f := op(sessionA, "exec", "span-1", 1, 2)
	first, other := strings.Repeat("t", idBytes)+"1", strings.Repeat("t", idBytes)+"2"
	s.TraceID, f.TraceID = &first, &first
	s2, f2 := op(sessionA, "exec", "span-2", 3, 4)
	s2.TraceID, f2.TraceID = &other, &other
	b.WriteString(canonLines(s, f, s2, f2))
	p := writeFile(t, "events.jsonl", b.String())

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	srv, err := webview.New(context.Background(), webview.Config{Sources: []string{p}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	assert.Less(t, held, int64(sessions*idBytes/4), "%d sessions with %d-byte trace ids hold %d bytes", sessions, idBytes, held)

	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	code, _, body := get(t, hs.URL+"/?limit=1000")
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, strings.Repeat("t", 100)+"…", "the trace id is cut visibly")
	assert.Equal(t, 1, strings.Count(body, "and other traces"), "only the session with two traces has others")
	code, _, body = get(t, hs.URL+"/session/"+sessionA.String())
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, "the first of its operations' traces")
}

// Indenting multiplies a line's length by its depth: data nested 190
// deep holding 200,000 numbers is a line of 400 KB and 77 MB indented.
// An operation's page shows the first MiB of it, and builds no more.
func TestServeOperationPageDoesNotIndentMoreThanItShows(t *testing.T) {
	const depth, items = 190, 200_000
	s, _ := op(sessionA, "exec", "deep", 1, 2)
	s.Data = auditevent.MustParseData(`{"a":` + strings.Repeat("[", depth) + strings.Repeat("1,", items-1) + "1" + strings.Repeat("]", depth) + `}`)
	p := writeFile(t, "events.jsonl", canonLines(s))
	hs := startView(t, webview.Config{Sources: []string{p}})
	url := hs.URL + "/session/" + sessionA.String() + "/op/0"
	code, _, body := get(t, url)
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, "… cut: 77")

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	code, _, _ = get(t, url)
	runtime.ReadMemStats(&after)
	require.Equal(t, http.StatusOK, code)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(32<<20), "one page of a 400 KB line")
}
