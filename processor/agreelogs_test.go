package sandboxauditprocessor

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	keepAll := payloadpolicy.Policy{Policy: auditevent.Policy{IncludeExecOutput: true, MaxStdoutChars: math.MaxInt32, MaxStderrChars: math.MaxInt32, IncludeWriteLen: true}}
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
						var cuts redact.Counts
						file := string(table.Get(e.Op).AppendLine(nil, &e, &cuts))
						assert.Equal(t, file, out.At(i).Body().Str()+"\n")

						back, _, err := logmap.FromLogRecord(out.At(i))
						require.NoError(t, err)
						assert.Equal(t, file, string(keepAll.AppendLine(nil, &back, nil)))
					}
				})
			}
		}
	}
}
