package sandboxauditprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// TestLogsGovernedBytesInMapBodyAreRedacted: bytes in a map or list body
// (a logging bridge's []byte field) are cut as the same text would be
// where they sit, and stay bytes. A backend shows them base64-encoded,
// which hides nothing.
func TestLogsGovernedBytesInMapBodyAreRedacted(t *testing.T) {
	ld, lr := oneRecord()
	lr.SetEventName("app.exec")
	m := lr.Body().SetEmptyMap()
	m.PutEmptyMap("headers").PutEmptyBytes("Authorization").FromRaw([]byte("Bearer abcdef0123456789abcdef"))
	m.PutEmptyBytes("password").FromRaw([]byte("hunter2"))
	m.PutEmptyBytes("note").FromRaw([]byte("token " + redacttest.GitHubToken))
	argv := m.PutEmptySlice("argv")
	argv.AppendEmpty().SetEmptyBytes().FromRaw([]byte("--password"))
	argv.AppendEmpty().SetEmptyBytes().FromRaw([]byte("hunter3"))
	m.PutEmptyBytes("blob").FromRaw([]byte{0xff, 0x00, 'o', 'k'})
	putSandbox(lr.Attributes(), "exec")

	body := records(processLogs(t, createDefaultConfig().(*Config), ld)).At(0).Body().Map()
	text := func(v pcommon.Value, ok bool) string {
		t.Helper()
		require.True(t, ok)
		require.Equal(t, pcommon.ValueTypeBytes, v.Type(), "stays bytes")
		return string(v.Bytes().AsRaw())
	}
	headers, ok := body.Get("headers")
	require.True(t, ok)
	auth := text(headers.Map().Get("Authorization"))
	assert.NotContains(t, auth, "abcdef0123456789abcdef")
	assert.Contains(t, auth, "Bearer ")
	assert.NotContains(t, text(body.Get("password")), "hunter2")
	assert.NotContains(t, text(body.Get("note")), redacttest.GitHubToken)
	gotArgv, ok := body.Get("argv")
	require.True(t, ok)
	assert.Equal(t, "--password", text(gotArgv.Slice().At(0), true))
	assert.NotContains(t, text(gotArgv.Slice().At(1), true), "hunter3")
	assert.Equal(t, string([]byte{0xff, 0x00, 'o', 'k'}), text(body.Get("blob")), "nothing to cut: the bytes as they were")

	// Redaction off: they pass as they are.
	ld, lr = oneRecord()
	lr.SetEventName("app.exec")
	lr.Body().SetEmptyMap().PutEmptyBytes("password").FromRaw([]byte("hunter2"))
	putSandbox(lr.Attributes(), "exec")
	got, _ := records(processLogs(t, redactionOff(), ld)).At(0).Body().Map().Get("password")
	assert.Equal(t, "hunter2", string(got.Bytes().AsRaw()))
}

// TestLogsGovernedBytesBodyIsRedactedAsText: a body that is bytes is cut
// as a text body is, and stays bytes.
func TestLogsGovernedBytesBodyIsRedactedAsText(t *testing.T) {
	for name, tc := range map[string]struct{ in, gone, want string }{
		"text": {in: "login password=hunter2 ok", gone: "hunter2"},
		"json": {in: `{"stdout":"EXEC-STDOUT","password":"hunter3"}`, gone: "hunter3", want: `{"password":"[REDACTED:password]"}`},
	} {
		t.Run(name, func(t *testing.T) {
			ld, lr := oneRecord()
			lr.SetEventName("app.exec")
			lr.Body().SetEmptyBytes().FromRaw([]byte(tc.in))
			putSandbox(lr.Attributes(), "exec")
			body := records(processLogs(t, createDefaultConfig().(*Config), ld)).At(0).Body()
			require.Equal(t, pcommon.ValueTypeBytes, body.Type())
			got := string(body.Bytes().AsRaw())
			assert.NotContains(t, got, tc.gone)
			assert.NotContains(t, got, "EXEC-STDOUT")
			if tc.want != "" {
				assert.Equal(t, tc.want, got)
			}
		})
	}
}
