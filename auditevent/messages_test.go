package auditevent_test

import (
	"strings"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// Errors name the field and say what would be valid: every missing field
// at once, the valid ops, and nesting depth as depth.
func TestDecodeErrorsSayWhatIsValid(t *testing.T) {
	deep := `{"version":1,"session_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","seq":1,"op":"exec","phase":"start","span_id":"s","data":{"a":` +
		strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}}`
	for name, tc := range map[string]struct {
		in   string
		want []string
	}{
		"empty object": {`{}`, []string{"phase: missing", "also missing: session_id, seq, op, span_id"}},
		"finish without its fields": {`{"phase":"finish","op":"exec","span_id":"s"}`,
			[]string{"session_id: missing", "also missing: seq, ok, duration_ms"}},
		"unknown op": {`{"version":1,"session_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","seq":1,"op":"frobnicate","phase":"start","span_id":"s"}`,
			[]string{"op: not a sandbox operation", "must be one of: " + strings.Join(auditevent.Ops(), ", ")}},
		"deep nesting": {deep, []string{"data: JSON nesting depth over 200 levels"}},
	} {
		_, err := auditevent.Decode([]byte(tc.in))
		if err == nil {
			t.Fatalf("%s: decoded", name)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", name, err, w)
			}
		}
		if strings.Contains(err.Error(), "not JSON object text") {
			t.Errorf("%s: %q", name, err)
		}
	}
}
