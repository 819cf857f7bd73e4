package payloadpolicy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestLineLenIsTheWrittenLength: with and without redaction, LineLen is
// the length of the line AppendLine writes, also where markers make the
// line longer than the event, and Growth bounds how much longer.
func TestLineLenIsTheWrittenLength(t *testing.T) {
	many := strings.Repeat("x ", 200)
	for name, o := range map[string]auditevent.PolicyOverride{
		"redaction off": {IncludeExecOutput: auditevent.Ptr(true), Redact: auditevent.RedactOverride{Enabled: auditevent.Ptr(false)}},
		"built-in":      {IncludeExecOutput: auditevent.Ptr(true)},
		"one-byte cuts": {IncludeExecOutput: auditevent.Ptr(true), Redact: auditevent.RedactOverride{Patterns: []string{"x"}}},
		"output off":    {Redact: auditevent.RedactOverride{Patterns: []string{"x"}}},
	} {
		t.Run(name, func(t *testing.T) {
			tab, err := NewTable(auditevent.PolicySet{Default: o})
			require.NoError(t, err)
			data, err := auditevent.MarshalData(map[string]any{"note": many})
			require.NoError(t, err)
			for _, ev := range []auditevent.Event{
				secretFinish(t),
				{Version: 1, Op: "exec", Phase: auditevent.PhaseFinish, SpanID: "s", Data: data,
					ErrorMessage: auditevent.Ptr(many), StdoutBytes: []byte(many), Stderr: auditevent.Ptr(many)},
			} {
				p := tab.Get(ev.Op)
				line := p.AppendLine(nil, &ev, nil)
				assert.Equal(t, len(line), p.LineLen(&ev))
				assert.LessOrEqual(t, len(line), (auditevent.LineBound(&ev)+6*len(ev.StdoutBytes))*p.Growth()+64)
			}
		})
	}
}
