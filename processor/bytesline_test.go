package sandboxauditprocessor

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// TestLogsBytesBodyIsReadAsItsText: an event line as bytes (what the
// filelog receiver gives with `encoding: nop`) becomes what the same line
// as text becomes, under any event name, governed or not, and stays
// bytes: not named as an event, it loses its output; named, it gets the
// output its policy lets through.
func TestLogsBytesBodyIsReadAsItsText(t *testing.T) {
	cfg := loadConfig(t, "exec_output") // output kept for exec
	for _, name := range []string{"", "app.line", "sandbox.session.finish"} {
		for _, governed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%q/governed=%v", name, governed), func(t *testing.T) {
				build := func(set func(pcommon.Value)) plog.LogRecord {
					ld, lr := oneRecord()
					lr.SetEventName(name)
					set(lr.Body())
					if governed {
						putSandbox(lr.Attributes(), "exec")
					}
					return records(processLogs(t, cfg, ld)).At(0)
				}
				text := build(func(v pcommon.Value) { v.SetStr(outputLine) })
				bytes := build(func(v pcommon.Value) { v.SetEmptyBytes().FromRaw([]byte(outputLine)) })

				require.Equal(t, pcommon.ValueTypeBytes, bytes.Body().Type(), "stays bytes")
				assert.Equal(t, text.Body().Str(), string(bytes.Body().Bytes().AsRaw()))
				assert.Equal(t, text.Attributes().AsRaw(), bytes.Attributes().AsRaw())
				if name == "sandbox.session.finish" {
					assert.Contains(t, text.Body().Str(), `"stdout":"EXEC-`, "kept as the policy says")
				} else {
					assert.NotContains(t, text.Body().Str(), "EXEC-STD")
				}
			})
		}
	}
}

// TestLogsBytesBodyNotUTF8IsNoEvent: bytes that are not UTF-8 cannot be
// a JSON event. Not named as one, they are an event line that does not
// decode and lose their output, as a line cut short does; named as one,
// the record is malformed and its body emptied, as a body that does not
// decode is.
func TestLogsBytesBodyNotUTF8IsNoEvent(t *testing.T) {
	notUTF8 := []byte(outputLine[:len(outputLine)-2] + "\xff\"}")
	for name, want := range map[string]any{"": []byte(beforeOutput), "sandbox.session.finish": nil} {
		ld, lr := oneRecord()
		lr.SetEventName(name)
		lr.Body().SetEmptyBytes().FromRaw(notUTF8)
		assert.Equal(t, want, records(processLogs(t, loadConfig(t, "exec_output"), ld)).At(0).Body().AsRaw(), "%q", name)
	}
}
