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
// exporter writes from the original span with redaction on, exec output cut
// short or not. Seeds:
// testdata/fuzz/FuzzBackendAgreesWithTheRedactedFile.
func FuzzBackendAgreesWithTheRedactedFile(f *testing.F) {
	f.Add(`{"command":["curl","-H","Authorization: Bearer abcdefghijklmnop0123456789"]}`, `{"env":{"DB_PASSWORD":"hunter2-Xq9"}}`,
		"token=ghp_R8sTq2VwXyZ1aBcDeFgHiJkLmNoPqRsTuV4w", "password: hunter2", []byte("AKIAQX4TZ7LMN2PB5RWS\n"), "x")
	f.Add("not json password=x", "", "", "Bearer abcdefghijklmnop0123456789", []byte(nil), "")
	f.Add(`{"a":1}`, "", "", "", []byte("password=hunter2hunter2 and more"), "")                 // cut inside a marker
	f.Add(`{"a":"ghp_R8sTq2VwXyZ1aBcDeFgHiJkLmNoPqRsTuV4w","a":1}`, "", "", "", []byte(nil), "") // a key named twice
	f.Add(`{"command":["bash","-lc","PGPASSWORD=pw psql -h db; mysql -uroot -ppw db"]}`, `{"command":["curl","-u","a:pw","-x"]}`,
		"sshpass -p pw ssh -p 22 h", "openssl rsa -passin pass:pw", []byte("docker login -u a -p pw\n"), "redis-cli -a pw")
	// Each input runs under one of four policies: with and without the
	// write length, and output kept whole or cut short, where the cut may
	// land inside a marker.
	var cfgs [4]*Config
	var tables [4]*payloadpolicy.Table
	for i := range cfgs {
		cfgs[i] = createDefaultConfig().(*Config)
		cfgs[i].PayloadPolicy.IncludeExecOutput = auditevent.Ptr(true)
		cfgs[i].PayloadPolicy.IncludeWriteLen = auditevent.Ptr(i%2 == 0)
		if i >= 2 {
			cfgs[i].PayloadPolicy.MaxStdoutChars = auditevent.Ptr(12)
			cfgs[i].PayloadPolicy.MaxStderrChars = auditevent.Ptr(12)
		}
		t, err := payloadpolicy.NewTable(auditevent.PolicySet{Default: cfgs[i].PayloadPolicy})
		require.NoError(f, err)
		tables[i] = t
	}
	keepAll := auditevent.Policy{IncludeExecOutput: true, MaxStdoutChars: math.MaxInt32, MaxStderrChars: math.MaxInt32, IncludeWriteLen: true}

	f.Fuzz(func(t *testing.T, startData, finishData, errMsg, status string, stdout []byte, stderr string) {
		i := len(startData) % len(cfgs)
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
		processed := process(t, cfg, fuzzSpan(startData, finishData, errMsg, status, stdout, stderr))
		require.Equal(t, string(file), lines(t, processed, keepAll))
		// The data attributes hold the objects the lines hold, as text:
		// nothing the mapping leaves out, such as a key's earlier copy.
		attrs := processed.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
		for _, key := range []string{"sandbox.start_data", "sandbox.finish_data"} {
			if v, ok := attrs.Get(key); ok {
				d, err := auditevent.ParseDataString(v.Str())
				require.NoError(t, err, key)
				require.Equal(t, d.String(), v.Str(), key)
			}
		}
	})
}
