package ndjson

import (
	"encoding/json"
	"errors"
	"maps"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const start = `{"data":{},"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","op":"exec","parent_span_id":null,"phase":"start","seq":1,"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","span_id":"00f067aa0ba902b7","trace_id":null,"ts":"2026-03-14T15:09:26.535897Z","version":1}`

func TestDecodeLinesAndBlanks(t *testing.T) {
	evs, err := Decode([]byte("\n"+start+"\r\n  \t\n"+start), nil)
	require.NoError(t, err)
	assert.Len(t, evs, 2)
	assert.Equal(t, 2, CountLines([]byte("\n"+start+"\r\n  \t\n"+start)))
	var lines []int
	for n := range Lines([]byte("\n" + start + "\n\n" + start + "\n")) {
		lines = append(lines, n)
	}
	assert.Equal(t, []int{2, 4}, lines, "numbered counting blank lines, as an editor shows them")
}

// TestRedactedHoldsNoInputText: the plain error may quote input (the
// receiver answers it to the client that sent it); Redacted, which is
// logged, names only the line, a known field and the error type.
func TestRedactedHoldsNoInputText(t *testing.T) {
	for name, c := range map[string]struct{ line, want string }{
		"bad op value": {
			line: strings.Replace(start, `"op":"exec"`, `"op":"secret-value"`, 1),
			want: "line 3: op: literal_error",
		},
		"invalid value under an unknown key": {
			line: `{"phase":"start","secret_key_text":tru}`,
			want: "line 3: (unknown field): json_invalid",
		},
		"not an object": {
			line: `"secret-string"`,
			want: "line 3: event: model_attributes_type",
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Decode([]byte(start+"\n\n"+c.line+"\n"), nil)
			var le *LineError
			require.True(t, errors.As(err, &le), "%v", err)
			assert.Equal(t, 3, le.Line)
			assert.Equal(t, c.want, le.Redacted())
			assert.NotContains(t, le.Redacted(), "secret")
		})
	}
}

// minEventLine must stay below every valid line, or Decode's first guess at
// the slice would be short (a cost, not an error). Dropping each field that
// can go, and writing ts in its shortest accepted form, must leave a line
// longer than it.
func TestMinEventLineIsBelowAnyEvent(t *testing.T) {
	var fields map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(start), &fields))
	fields["ts"] = json.RawMessage(`"2026-03-14T15:09"`)
	fields["span_id"] = json.RawMessage(`""`)
	for key := range maps.Clone(fields) {
		v := fields[key]
		delete(fields, key)
		b, err := json.Marshal(fields)
		require.NoError(t, err)
		if _, err := Decode(b, nil); err != nil {
			fields[key] = v // required
		}
	}
	shortest, err := json.Marshal(fields)
	require.NoError(t, err)
	_, err = Decode(shortest, nil)
	require.NoError(t, err)
	assert.Greater(t, len(shortest), minEventLine, "%s", shortest)
}

// A body of blank lines reserves memory in proportion to its size, not to
// its line count (it reserved 256 bytes per newline).
func TestBlankLinesReserveLittle(t *testing.T) {
	body := []byte(strings.Repeat("\n", 1<<20))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	evs, err := Decode(body, nil)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Empty(t, evs)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8*len(body)), "bytes allocated for %d blank lines", len(body))
}
