package sandboxauditprocessor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/payloadpolicy"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
)

// fuzzSpan is a finished exec span with the given text fields; an empty
// string leaves the attribute out.
func fuzzSpan(startData, finishData, errMsg, status string, stdout []byte, stderr string) ptrace.Traces {
	td := agreeSpan(rawCases[0], false)
	span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	attrs := span.Attributes()
	attrs.Remove("sandbox.start_data")
	for k, v := range map[string]string{"sandbox.start_data": startData, "sandbox.finish_data": finishData, "sandbox.error.message": errMsg, "sandbox.exec.stderr": stderr} {
		if v != "" {
			attrs.PutStr(k, v)
		}
	}
	if stdout != nil {
		attrs.PutEmptyBytes("sandbox.exec.stdout_bytes").FromRaw(stdout)
	}
	if status != "" {
		span.Status().SetCode(ptrace.StatusCodeError)
		span.Status().SetMessage(status)
	}
	return td
}

// FuzzBackendAgreesWithTheRedactedFile: a span that went through the
// processor, mapped with nothing more redacted, gives the lines the audit
// exporter writes from the original span with redaction on. Seeds:
// testdata/fuzz/FuzzBackendAgreesWithTheRedactedFile.
func FuzzBackendAgreesWithTheRedactedFile(f *testing.F) {
	f.Add(`{"command":["curl","-H","Authorization: Bearer abcdefghijklmnop0123456789"]}`, `{"env":{"DB_PASSWORD":"hunter2-Xq9"}}`,
		"token=ghp_R8sTq2VwXyZ1aBcDeFgHiJkLmNoPqRsTuV4w", "password: hunter2", []byte("AKIAQX4TZ7LMN2PB5RWS\n"), "x")
	f.Add("not json password=x", "", "", "Bearer abcdefghijklmnop0123456789", []byte(nil), "")
	f.Add(`{"command":["bash","-lc","PGPASSWORD=pw psql -h db; mysql -uroot -ppw db"]}`, `{"command":["curl","-u","a:pw","-x"]}`,
		"sshpass -p pw ssh -p 22 h", "openssl rsa -passin pass:pw", []byte("docker login -u a -p pw\n"), "redis-cli -a pw")
	var cfgs [2]*Config
	var tables [2]*payloadpolicy.Table
	for i, writeLen := range []bool{true, false} {
		cfgs[i] = createDefaultConfig().(*Config)
		cfgs[i].PayloadPolicy.IncludeExecOutput = auditevent.Ptr(true)
		cfgs[i].PayloadPolicy.IncludeWriteLen = auditevent.Ptr(writeLen)
		t, err := payloadpolicy.NewTable(auditevent.PolicySet{Default: cfgs[i].PayloadPolicy})
		require.NoError(f, err)
		tables[i] = t
	}
	keepAll := auditevent.Policy{IncludeExecOutput: true, MaxStdoutChars: math.MaxInt32, MaxStderrChars: math.MaxInt32, IncludeWriteLen: true}

	f.Fuzz(func(t *testing.T, startData, finishData, errMsg, status string, stdout []byte, stderr string) {
		i := len(startData) % 2 // half the inputs drop the write length
		cfg, table := cfgs[i], tables[i]
		orig := fuzzSpan(startData, finishData, errMsg, status, stdout, stderr)
		evs, err := spanmap.NewMapper(0).AppendSpanEvents(nil, orig.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0), nil)
		if err != nil {
			return // the exporter refuses the span
		}
		var file []byte
		var cuts redact.Counts
		for i := range evs {
			file = table.Get("exec").AppendLine(file, &evs[i], &cuts)
		}
		backend := lines(t, process(t, cfg, fuzzSpan(startData, finishData, errMsg, status, stdout, stderr)), keepAll)
		require.Equal(t, string(file), backend)
	})
}
