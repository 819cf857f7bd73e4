package sandboxauditprocessor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/logmap"
	"github.com/sandboxaudit/sandboxaudit/internal/payloadpolicy"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
)

// bodyCase is the body of a record not named as an audit event, and what
// the processor makes of it (README, "Log records"): the line of the event
// it holds, of phase; or, when it holds none, the body itself, or governed
// on a record the policy governs (nil: the body as it is); or, for an
// event line that does not decode, cut: the text before its output, on
// any record.
type bodyCase struct {
	set      func(pcommon.Value)
	phase    string
	governed any
	cut      string
}

// beforeOutput is outputLine up to its first output member.
var beforeOutput = outputLine[:strings.Index(outputLine, `"stdout"`)]

func strBody(s string) func(pcommon.Value) { return func(v pcommon.Value) { v.SetStr(s) } }

func bytesBody(s string) func(pcommon.Value) {
	return func(v pcommon.Value) { v.SetEmptyBytes().FromRaw([]byte(s)) }
}

const startWithSecret = `{"version":1,` + logIDs + `,"phase":"start","data":{"command":["curl","-H","Authorization: Bearer abcdefghijklmnop0123456789"]}}`

// outputLineRest is outputLine as a canonical JSON object without its
// output and its phase, less the opening brace.
const outputLineRest = `"data":{"bytes":3},"duration_ms":1,` +
	`"error_code":null,"error_message":null,"error_retryable":null,"error_type":null,"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","ok":true,` +
	`"op":"exec","parent_span_id":null,"seq":1,"session_id":"` + logSession + `","span_id":"00f067aa0ba902b7",` +
	`"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","ts":"2026-03-14T15:09:26.535897Z","version":1}`

// bodyCases are event lines, the "phase" key spelled out, escaped or
// missing; JSON objects that name a phase, or look like events, and are
// none; malformed JSON, other text, and bodies that are not text.
var bodyCases = map[string]bodyCase{
	"finish line":            {set: strBody(outputLine), phase: "finish"},
	"start line":             {set: strBody(startWithSecret), phase: "start"},
	"blanks first":           {set: strBody("\n\t " + outputLine), phase: "finish"},
	`key "ph\u0061se"`:       {set: strBody(strings.Replace(outputLine, `"phase"`, `"ph\u0061se"`, 1)), phase: "finish"},
	`key "\u0070hase"`:       {set: strBody(strings.Replace(startWithSecret, `"phase"`, `"\u0070hase"`, 1)), phase: "start"},
	"no event_id, ts, data":  {set: strBody(`{"session_id":"` + logSession + `","seq":3,"op":"exec","span_id":"s1","phase":"start"}`), phase: "start"},
	`key "\u0050hase"`:       {set: strBody(strings.Replace(outputLine, `"phase"`, `"\u0050hase"`, 1)), governed: `{"Phase":"finish",` + outputLineRest},
	"no session":             {set: strBody(`{"op":"exec","phase":"start","seq":1,"span_id":"s1","stdout":"x"}`), governed: `{"op":"exec","phase":"start","seq":1,"span_id":"s1"}`},
	"phase of a build":       {set: strBody(`{"phase":"build","stdout":"x","msg":"ok"}`), governed: `{"msg":"ok","phase":"build"}`},
	"JSON log":               {set: strBody(`{"level":"info","msg":"request done","status":200,"stdout":"EXEC-OUT"}`), governed: `{"level":"info","msg":"request done","status":200}`},
	"escape in a value":      {set: strBody(`{"msg":"caf\u00e9","stderr":"x"}`), governed: `{"msg":"caf\u00e9"}`},
	"phase in a value":       {set: strBody(`{"msg":"the \"phase\" is start","stdout":"x"}`), governed: `{"msg":"the \"phase\" is start"}`},
	"secret in a JSON log":   {set: strBody(`{"msg":"Authorization: Bearer abcdefghijklmnop0123456789"}`), governed: `{"msg":"Authorization: Bearer [REDACTED:bearer_token]"}`},
	"cut short":              {set: strBody(outputLine[:len(outputLine)-1]), cut: beforeOutput},
	"cut in its output":      {set: strBody(outputLine[:strings.Index(outputLine, "STDOUT")]), cut: beforeOutput},
	"cut before its output":  {set: strBody(beforeOutput), cut: beforeOutput},
	"text after":             {set: strBody(outputLine + "x"), cut: beforeOutput},
	"escaped key, cut short": {set: strBody(strings.Replace(outputLine, `"stdout"`, `"\u0073tdout"`, 1) + "x"), cut: beforeOutput},
	"secret, cut short":      {set: strBody(startWithSecret[:len(startWithSecret)-1] + `,"stdout":"x`), cut: strings.Replace(startWithSecret[:len(startWithSecret)-1], "abcdefghijklmnop0123456789", "[REDACTED:bearer_token]", 1) + ","},
	"in a list":              {set: strBody("[" + outputLine + "]")},
	"unclosed":               {set: strBody(`{"phase":"start",`)},
	"plain text":             {set: strBody("GET /health 200")},
	"text naming a phase":    {set: strBody(`phase "start" done`)},
	"empty text":             {set: strBody("")},
	"empty":                  {set: func(pcommon.Value) {}},
	"bytes of an event line": {set: bytesBody(outputLine), phase: "finish"},
	"bytes not UTF-8":        {set: bytesBody(strings.Replace(outputLine, "EXEC-STDOUT", "EXEC-\xff", 1)), cut: beforeOutput},
	"bytes cut short":        {set: bytesBody(outputLine[:len(outputLine)-1]), cut: beforeOutput},
	"map of event fields": {set: func(v pcommon.Value) {
		m := v.SetEmptyMap()
		m.PutStr("phase", "finish")
		m.PutStr("op", "exec")
		m.PutStr("stdout", "EXEC-OUT")
	}, governed: map[string]any{"phase": "finish", "op": "exec"}},
}

// TestLogsBodyOfNoAuditEventName: each body of bodyCases, under no event
// name or another one, on a record the policy governs or not, becomes
// what the README says. An event line's is computed apart, from the record
// renamed as its event, so that the exporter reads it.
func TestLogsBodyOfNoAuditEventName(t *testing.T) {
	cfg := loadConfig(t, "exec_output") // output kept for exec: not for such a record
	table, err := payloadpolicy.NewTable(auditevent.PolicySet{Default: cfg.PayloadPolicy, ByOp: cfg.PayloadPolicyByOp})
	require.NoError(t, err)
	for name, c := range bodyCases {
		for _, governed := range []bool{false, true} {
			for _, eventName := range []string{"", "app.line"} {
				t.Run(fmt.Sprintf("%s/governed=%v/%q", name, governed, eventName), func(t *testing.T) {
					ld, lr := oneRecord()
					lr.SetEventName(eventName)
					c.set(lr.Body())
					lr.Attributes().PutStr("http.request.method", "GET")
					if governed {
						putSandbox(lr.Attributes(), "exec")
						lr.Attributes().PutEmptyBytes("sandbox.exec.stdout_bytes").FromRaw([]byte("EXEC-RAW"))
					}
					in := plog.NewLogRecord()
					lr.CopyTo(in)

					got := records(processLogs(t, cfg, ld)).At(0)
					assert.Equal(t, wantBody(t, table, c, in, governed), got.Body().AsRaw())
					wantAttrs := in.Attributes().AsRaw()
					if governed || c.phase != "" {
						delete(wantAttrs, "sandbox.exec.stdout_bytes")
					}
					assert.Equal(t, wantAttrs, got.Attributes().AsRaw())
				})
			}
		}
	}
}

// wantBody is the body c's record in should have after the processor.
func wantBody(t *testing.T, table *payloadpolicy.Table, c bodyCase, in plog.LogRecord, governed bool) any {
	t.Helper()
	switch {
	case c.phase != "":
		named := plog.NewLogRecord()
		in.CopyTo(named)
		named.SetEventName("sandbox.session." + c.phase)
		e, _, err := logmap.FromLogRecord(named)
		require.NoError(t, err)
		pol := table.Get(e.Op)
		pol.IncludeExecOutput = false
		var cuts redact.Counts
		line := strings.TrimSuffix(string(pol.AppendLine(nil, &e, &cuts)), "\n")
		if in.Body().Type() == pcommon.ValueTypeBytes {
			return []byte(line) // bytes stay bytes
		}
		return line
	case c.cut != "":
		if in.Body().Type() == pcommon.ValueTypeBytes {
			return []byte(c.cut)
		}
		return c.cut
	case governed && c.governed != nil:
		return c.governed
	}
	return in.Body().AsRaw()
}
