package sandboxauditencoding

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// TestMarshalRedacts: lines marshaled from records whose events hold a
// secret of every kind (argv, env, error message, raw stdout) hold none of
// them, are canonical, and the cuts are counted by kind.
func TestMarshalRedacts(t *testing.T) {
	data, err := json.Marshal(map[string]any{"command": redacttest.Argv(), "env": redacttest.Env()})
	require.NoError(t, err)
	msg, err := json.Marshal(redacttest.Text())
	require.NoError(t, err)
	finish := strings.Replace(goodFinish, `"data":{}`, `"data":`+string(data), 1)
	finish = strings.Replace(finish, `"error_message":null`, `"error_message":`+string(msg), 1)

	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	cfg := execOutputConfig()
	cfg.PayloadPolicy.Redact = auditevent.RedactOverride{Patterns: []string{redacttest.UserPattern}, Keys: []string{redacttest.UserKey}}
	ext := newExt(t, cfg, tel)
	ld, err := ext.UnmarshalLogs([]byte(finish + "\n"))
	require.NoError(t, err)
	rec := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	rec.Attributes().PutEmptyBytes("sandbox.exec.stdout_bytes").FromRaw([]byte(redacttest.Text()))

	out, err := ext.MarshalLogs(ld)
	require.NoError(t, err)
	line := string(out)
	for _, secret := range redacttest.Secrets() {
		assert.NotContains(t, line, secret)
	}
	ev, err := auditevent.Decode([]byte(strings.TrimSuffix(line, "\n")))
	require.NoError(t, err)
	assert.Equal(t, line, string(auditevent.Line(&ev)))
	assert.Contains(t, *ev.Stdout, "[REDACTED:jwt]")

	m, err := tel.GetMetric("otelcol_sandboxaudit_encoding_secrets_redacted")
	require.NoError(t, err)
	assert.NotEmpty(t, m.Data)
}
