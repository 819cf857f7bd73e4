package sandboxauditprocessor

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// outputLine is a finish line holding exec output as text, as the Python
// reference's JSONL sink writes it.
const outputLine = `{"version":1,` + logIDs + `,"phase":"finish","data":{"bytes":3},"ok":true,"duration_ms":1,` +
	`"error_type":null,"error_code":null,"error_message":null,"error_retryable":null,` +
	`"stdout":"EXEC-STDOUT","stderr":"EXEC-STDERR"}`

// TestLogsEventLineUnderAnotherNameLosesItsOutput: a record whose body is
// an event line but whose event name is not an audit event's (none, as a
// log shipper sends a JSONL file's lines, or another spelling) gets no
// line from the exporter, so its output reaches no audit line: the backend
// gets the line the exporter would write without output, whether or not
// the record carries the sandbox attributes.
func TestLogsEventLineUnderAnotherNameLosesItsOutput(t *testing.T) {
	cfg := loadConfig(t, "exec_output") // output kept for exec: not for such a record
	for _, name := range []string{"", "Sandbox.Session.Finish", "sandbox.session.finish ", "app.exec"} {
		for _, withAttrs := range []bool{false, true} {
			t.Run(fmt.Sprintf("%q attrs %v", name, withAttrs), func(t *testing.T) {
				ld, lr := oneRecord()
				lr.SetEventName(name)
				lr.Body().SetStr(outputLine)
				if withAttrs {
					putSandbox(lr.Attributes(), "exec")
				}
				got := records(processLogs(t, cfg, ld)).At(0).Body().Str()
				assert.NotContains(t, got, "EXEC-STD")
				e, err := auditevent.DecodeString(got)
				require.NoError(t, err, "still an event line")
				assert.Nil(t, e.Stdout)
				assert.Nil(t, e.Stderr)
			})
		}
	}
}

// TestLogsGovernedJSONBodyLosesItsOutputMembers: a record the policy
// governs whose body is a JSON object but not an event loses the members
// an event holds its output in, with redaction off too.
func TestLogsGovernedJSONBodyLosesItsOutputMembers(t *testing.T) {
	for name, cfg := range map[string]*Config{"default": createDefaultConfig().(*Config), "redaction off": redactionOff()} {
		t.Run(name, func(t *testing.T) {
			ld, lr := oneRecord()
			lr.SetEventName("app.exec")
			lr.Body().SetStr(`{"op":"exec","stdout":"EXEC-STDOUT","stderr":"EXEC-STDERR","note":"done"}`)
			putSandbox(lr.Attributes(), "exec")
			got := records(processLogs(t, cfg, ld)).At(0).Body().Str()
			assert.Equal(t, `{"note":"done","op":"exec"}`, got)
		})
	}
}

func redactionOff() *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.PayloadPolicy.Redact.Enabled = auditevent.Ptr(false)
	return cfg
}

// TestLogsGovernedMapBodyLosesItsOutputMembers: the event's fields as a
// map body, as a logging bridge sends a structured message, lose the
// output members too.
func TestLogsGovernedMapBodyLosesItsOutputMembers(t *testing.T) {
	ld, lr := oneRecord()
	lr.SetEventName("app.exec")
	m := lr.Body().SetEmptyMap()
	m.PutStr("op", "exec")
	m.PutStr("stdout", "EXEC-STDOUT")
	m.PutEmptyBytes("stderr").FromRaw([]byte("EXEC-STDERR"))
	putSandbox(lr.Attributes(), "exec")
	got := records(processLogs(t, createDefaultConfig().(*Config), ld)).At(0).Body()
	assert.Equal(t, map[string]any{"op": "exec"}, got.AsRaw())
}
