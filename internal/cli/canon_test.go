package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/conformance"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

func TestCanonGoodAndBadLines(t *testing.T) {
	in := strings.Join([]string{
		// Any-case hyphen-less and braced UUIDs, nanoseconds, +00:00, unsorted keys, non-ASCII.
		`{"version": 1, "event_id": "0B9D8C7E6F5A4B3C8D2E1F0A9B8C7D6E", "ts": "2026-03-14T15:09:26.535897123+00:00", "session_id": "{6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b}", "seq": 3, "op": "write", "phase": "start", "span_id": "s1", "parent_span_id": null, "trace_id": null, "data": {"path": "/tmp/é", "bytes": 12}}`,
		``,
		`{"version":1,"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","ts":"2026-03-14T15:09:26Z","session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","seq":"4","op":"write","phase":"start","span_id":"s2"}`,
		// Integer duration_ms becomes a float; missing finish fields become null.
		`{"version":1,"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6f","ts":"2026-03-14T15:09:27Z","session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","seq":4,"op":"write","phase":"finish","span_id":"s1","parent_span_id":null,"trace_id":null,"data":{},"ok":true,"duration_ms":3}`,
		`not json`,
		`{"version":1,"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","ts":"2026-03-14T15:09:26Z","session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","seq":5,"op":"teleport","phase":"start","span_id":"s3"}`,
	}, "\n") // no newline after the last line
	r := run(t, in, "canon")

	assert.Equal(t, exitProblems, r.code)
	want := `{"data":{"bytes":12,"path":"/tmp/\u00e9"},"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","op":"write","parent_span_id":null,"phase":"start","seq":3,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"s1","trace_id":null,"ts":"2026-03-14T15:09:26.535897Z","version":1}` + "\n" +
		`{"data":{},"duration_ms":3.0,"error_code":null,"error_message":null,"error_retryable":null,"error_type":null,"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6f","ok":true,"op":"write","parent_span_id":null,"phase":"finish","seq":4,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"s1","stderr":null,"stdout":null,"trace_id":null,"ts":"2026-03-14T15:09:27Z","version":1}` + "\n"
	assert.Equal(t, want, r.stdout)

	errLines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	require.Len(t, errLines, 4, r.stderr)
	assert.True(t, strings.HasPrefix(errLines[0], "line 3: seq: "), errLines[0])
	assert.True(t, strings.HasPrefix(errLines[1], "line 5: "), errLines[1])
	assert.True(t, strings.HasPrefix(errLines[2], "line 6: op: "), errLines[2])
	assert.Equal(t, "canon: 3 bad lines skipped", errLines[3])
}

func TestCanonAllGood(t *testing.T) {
	in := "\n" + `{"session_id":"6f1c2a8e3b4d4e5f9a0b1c2d3e4f5a6b","event_id":"urn:uuid:0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","ts":"2026-03-14T15:09:26.000000-00:00","seq":1,"op":"read","phase":"start","span_id":"x"}` + "\n\n"
	r := run(t, in, "canon")
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Empty(t, r.stderr)
	assert.Equal(t, `{"data":{},"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","op":"read","parent_span_id":null,"phase":"start","seq":1,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"x","trace_id":null,"ts":"2026-03-14T15:09:26Z","version":1}`+"\n", r.stdout)
}

// A line of Unicode spaces (no-break space, NEL, line separator,
// ideographic space) is not JSON: it is reported, as the reference reports
// it, not skipped as blank. ASCII white space alone (VT and FF too, as
// Python's bytes.strip() has it) is blank.
func TestCanonUnicodeSpacesAreNotBlank(t *testing.T) {
	in := " \t\v\f\r\n" + "\u00a0\n" + "\u0085\n" + "\u2028\n" + "\u3000\n"
	r := run(t, in, "canon")
	assert.Equal(t, exitProblems, r.code)
	assert.Empty(t, r.stdout)
	errLines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	require.Len(t, errLines, 5, r.stderr)
	for i, n := range []int{2, 3, 4, 5} {
		assert.True(t, strings.HasPrefix(errLines[i], fmt.Sprintf("line %d: ", n)), errLines[i])
	}
}

// TestCanonConformance runs the reference vectors through the command: the
// encode vectors' inputs must come out as the reference's lines, in order,
// and each reject vector's input must be reported with its line and field.
func TestCanonConformance(t *testing.T) {
	vectors, err := conformance.LoadAll()
	require.NoError(t, err)
	var in, want strings.Builder
	wantErr := map[int]string{}
	n := 0
	for _, v := range vectors {
		if strings.Contains(v.Input, "\n") || strings.TrimSpace(v.Input) == "" {
			continue // one event per line; such inputs cannot be lines
		}
		switch v.Kind {
		case "encode":
			exp, err := v.ExpectString()
			require.NoError(t, err)
			want.WriteString(exp)
		case "reject":
			wantErr[n+1] = v.LocField()
		default:
			continue
		}
		n++
		in.WriteString(v.Input + "\n")
	}
	require.NotEmpty(t, wantErr)
	r := run(t, in.String(), "canon")
	assert.Equal(t, exitProblems, r.code)
	assert.Equal(t, want.String(), r.stdout)
	for num, field := range wantErr {
		prefix := fmt.Sprintf("line %d: ", num)
		if field != "" {
			prefix += field + ": "
		}
		assert.Contains(t, "\n"+r.stderr, "\n"+prefix, "reject on line %d", num)
	}
	assert.Contains(t, r.stderr, "canon: "+plural.Count(len(wantErr), "bad line")+" skipped")
}

func TestCanonUsage(t *testing.T) {
	r := run(t, "", "canon", "file.jsonl")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "stdin")

	r = run(t, "")
	assert.Equal(t, exitUsage, r.code)
	r = run(t, "", "frobnicate")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, `unknown command "frobnicate"`)
}

// Input spanning many chunks comes out in input order, with every bad line
// reported by its number, in order, whichever worker handled it.
func TestCanonManyChunksKeepOrder(t *testing.T) {
	const n = 5000 // several chunks of chunkMaxLines
	var in, want strings.Builder
	var wantBad []int
	num := 0
	for i := range n {
		num++
		switch {
		case i%1000 == 999:
			in.WriteString("   \n") // blank: skipped, still counted
			num++
		case i%777 == 5:
			in.WriteString("not json\n")
			wantBad = append(wantBad, num)
			continue
		}
		id := uuid.NewSHA1(sessionA, fmt.Appendf(nil, "%d", i))
		// Python field order, spaces, an upper-case UUID: not canonical.
		fmt.Fprintf(&in, `{"version": 1, "event_id": "%s", "ts": "2026-03-14T15:09:26+00:00", "session_id": "%s", "seq": %d, "op": "read", "phase": "start", "span_id": "s%d", "data": {"path": "/w/%d", "bytes": %d}}`+"\n",
			strings.ToUpper(id.String()), sessionA, i, i, i, i)
		ev := auditevent.Event{
			Version: 1, EventID: id, SessionID: sessionA, Seq: int64(i), Op: "read", Phase: auditevent.PhaseStart,
			SpanID: fmt.Sprintf("s%d", i), TS: auditevent.TimestampFromTime(time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)),
			Data: auditevent.MustParseData(fmt.Sprintf(`{"bytes":%d,"path":"/w/%d"}`, i, i)),
		}
		want.Write(auditevent.Line(&ev))
	}
	r := run(t, in.String(), "canon")
	assert.Equal(t, exitProblems, r.code)
	require.Equal(t, want.String(), r.stdout)
	errLines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	require.Len(t, errLines, len(wantBad)+1, r.stderr)
	for i, ln := range wantBad {
		assert.True(t, strings.HasPrefix(errLines[i], fmt.Sprintf("line %d: ", ln)), "report %d: %s", i, errLines[i])
	}
	assert.Equal(t, "canon: "+plural.Count(len(wantBad), "bad line")+" skipped", errLines[len(wantBad)])
}

// A failing stdout stops canon with an error instead of hanging the
// reader and workers.
func TestCanonStopsOnWriteError(t *testing.T) {
	in := benchInput(3000)
	done := make(chan struct{})
	var bad int
	var err error
	go func() {
		defer close(done)
		bad, err = canon(context.Background(), strings.NewReader(in), failingWriter{}, io.Discard)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("canon did not return after a write error")
	}
	require.ErrorContains(t, err, "writing stdout")
	assert.Zero(t, bad)
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestCanonNeverRedacts: canon is an exact canonicalizer; a credential in a
// line stays, whatever the collector's payload policy would cut.
func TestCanonNeverRedacts(t *testing.T) {
	line := `{"data":{"command":["gh","--token","` + redacttest.GitHubToken + `"],"env":{"DB_PASSWORD":"` + redacttest.Password + `"}},"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","op":"exec","parent_span_id":null,"phase":"start","seq":1,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"x","trace_id":null,"ts":"2026-03-14T15:09:26Z","version":1}` + "\n"
	r := run(t, line, "canon")
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, line, r.stdout)
}
