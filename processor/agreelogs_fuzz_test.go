package sandboxauditprocessor

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/logmap"
	"github.com/sandboxaudit/sandboxaudit/internal/payloadpolicy"
)

// fuzzRecord is an audit event record with body and, when not nil, raw
// stdout; named for the phase the body names.
func fuzzRecord(body string, stdout []byte) plog.Logs {
	ld, lr := oneRecord()
	lr.SetEventName("sandbox.session.start")
	if strings.Contains(body, `"phase":"finish"`) {
		lr.SetEventName("sandbox.session.finish")
	}
	lr.Body().SetStr(body)
	if stdout != nil {
		lr.Attributes().PutEmptyBytes("sandbox.exec.stdout_bytes").FromRaw(stdout)
	}
	return ld
}

// FuzzLogBackendAgreesWithTheRedactedFile: a record that maps has, after
// the processor, the exporter's line for it as body, and reads back to that
// line with nothing more cut; one that does not map keeps neither its body
// nor its output. Seeds: testdata/fuzz/FuzzLogBackendAgreesWithTheRedactedFile.
func FuzzLogBackendAgreesWithTheRedactedFile(f *testing.F) {
	f.Add(`{"version":1,`+logIDs+`,"phase":"start","data":{"bytes":3,"command":["curl","-H","Authorization: Bearer abcdefghijklmnop0123456789"]}}`, []byte(nil))
	f.Add(`{"version":1,`+logIDs+`,"phase":"finish","data":{},"ok":true,"duration_ms":1,"error_type":null,"error_code":null,"error_message":null,"error_retryable":null,"stdout":"password=x","stderr":null}`,
		[]byte("AKIAQX4TZ7LMN2PB5RWS\n"))
	f.Add(`{"version":1,"phase":"start","data":{"token":"t0k3n-Vq81Lx"}}`, []byte("out"))
	cfg := userRules()
	cfg.PayloadPolicy.IncludeExecOutput = auditevent.Ptr(true)
	table, err := payloadpolicy.NewTable(auditevent.PolicySet{Default: cfg.PayloadPolicy})
	require.NoError(f, err)

	f.Fuzz(func(t *testing.T, body string, stdout []byte) {
		got := records(processLogs(t, cfg, fuzzRecord(body, stdout))).At(0)
		e, _, err := logmap.FromLogRecord(records(fuzzRecord(body, stdout)).At(0))
		if err != nil {
			require.Equal(t, pcommon.ValueTypeEmpty, got.Body().Type())
			_, has := got.Attributes().Get("sandbox.exec.stdout_bytes")
			require.False(t, has)
			return
		}
		file := fileLine(table, &e)
		require.Equal(t, file, got.Body().Str()+"\n")
		back, _, err := logmap.FromLogRecord(got)
		require.NoError(t, err)
		require.Equal(t, file, string(keepAll().AppendLine(nil, &back)))
	})
}
