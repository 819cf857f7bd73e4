package ndjson

import (
	"errors"
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
