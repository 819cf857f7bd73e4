package sandboxauditprocessor

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/logmap"
	"github.com/sandboxaudit/sandboxaudit/internal/payloadpolicy"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
)

// TestLogBackendSeesWhatTheFileHolds: each audit event record through the
// processor has as body the line the audit exporter writes from the
// original record under the same policy, without its newline; and the
// processed record, read back and written with nothing cut, gives that
// line again, so its attributes add nothing to it.
func TestLogBackendSeesWhatTheFileHolds(t *testing.T) {
	for _, include := range []bool{false, true} {
		for _, writeLen := range []bool{false, true} {
			for _, redactOn := range []bool{false, true} {
				t.Run(fmt.Sprintf("include=%v/write_len=%v/redact=%v", include, writeLen, redactOn), func(t *testing.T) {
					cfg := userRules()
					cfg.PayloadPolicy.IncludeExecOutput = &include
					cfg.PayloadPolicy.IncludeWriteLen = &writeLen
					cfg.PayloadPolicy.MaxStdoutChars = auditevent.Ptr(40)
					cfg.PayloadPolicy.Redact.Enabled = &redactOn
					table, err := payloadpolicy.NewTable(auditevent.PolicySet{Default: cfg.PayloadPolicy})
					require.NoError(t, err)

					in := records(secretLogs(t))
					out := records(processLogs(t, cfg, secretLogs(t)))
					require.Equal(t, in.Len(), out.Len())
					for i := range in.Len() {
						e, _, err := logmap.FromLogRecord(in.At(i))
						require.NoError(t, err)
						file := fileLine(table, &e)
						assert.Equal(t, file, out.At(i).Body().Str()+"\n")

						back, _, err := logmap.FromLogRecord(out.At(i))
						require.NoError(t, err)
						assert.Equal(t, file, string(keepAll().AppendLine(nil, &back)))
					}
				})
			}
		}
	}
}

// TestLogBackendAgreesWithoutEventIDOrTS: a record whose body leaves out
// event_id, ts or both (the defaults come from the record) has, after the
// processor, the body the exporter writes from the original record: both
// read the record, apart, into one event.
func TestLogBackendAgreesWithoutEventIDOrTS(t *testing.T) {
	cfg := userRules()
	table, err := payloadpolicy.NewTable(auditevent.PolicySet{Default: cfg.PayloadPolicy})
	require.NoError(t, err)
	const common = `"version":1,"session_id":"` + logSession + `","seq":3,"op":"exec","span_id":"sandbox_op_1","parent_span_id":null,"trace_id":null`
	const finish = `"phase":"finish","data":{"command":["curl","-H","Authorization: Bearer abcdefghijklmnop0123456789"]},"ok":true,"duration_ms":2,` +
		`"error_type":null,"error_code":null,"error_message":null,"error_retryable":null,"stdout":null,"stderr":null`
	for _, body := range []string{
		`{` + common + `,"ts":"2026-03-14T15:09:26Z","phase":"start","data":{"token":"t0k3n-Vq81Lx"}}`,
		`{` + common + `,"event_id":"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e","phase":"start","data":{}}`,
		`{` + common + `,` + finish + `}`,
	} {
		for _, stamped := range []bool{false, true} {
			ld := fuzzRecord(body, nil)
			if stamped {
				records(ld).At(0).SetTimestamp(pcommon.NewTimestampFromTime(time.Date(2026, 5, 1, 8, 30, 0, 0, time.UTC)))
			}
			in := plog.NewLogs()
			ld.CopyTo(in)
			got := records(processLogs(t, cfg, ld)).At(0)
			e, _, err := logmap.FromLogRecord(records(in).At(0))
			require.NoError(t, err)
			file := fileLine(table, &e)
			assert.Equal(t, file, got.Body().Str()+"\n", "%s (record time set: %v)", body, stamped)
		}
	}
}

// fileLine is the line the audit exporter writes for e under table.
func fileLine(table *payloadpolicy.Table, e *auditevent.Event) string {
	var cuts redact.Counts
	return string(table.Get(e.Op).AppendLine(nil, e, &cuts))
}

// keepAll is the policy that writes an event whole: read back from a
// processed record, it gives the line the record's body holds.
func keepAll() auditevent.Policy {
	return auditevent.Policy{IncludeExecOutput: true, MaxStdoutChars: math.MaxInt32, MaxStderrChars: math.MaxInt32, IncludeWriteLen: true}
}
