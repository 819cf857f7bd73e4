package sandboxauditexporter

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// secretLogs is one exec finish log record with a secret of
// every kind in its argv, env, error message and raw stdout.
func secretLogs(t *testing.T) plog.Logs {
	t.Helper()
	data, err := json.Marshal(map[string]any{"command": redacttest.Argv(), "env": redacttest.Env()})
	require.NoError(t, err)
	msg, err := json.Marshal(redacttest.Text())
	require.NoError(t, err)
	body := strings.Replace(execFinishJSON("null", "null"), `"data":{"exit_code":0}`, `"data":`+string(data), 1)
	body = strings.Replace(body, `"error_message":null`, `"error_message":`+string(msg), 1)
	ld := plog.NewLogs()
	rec := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	rec.SetEventName("sandbox.session.finish")
	rec.Body().SetStr(body)
	rec.Attributes().PutStr("sandbox.session.id", sessionA)
	rec.Attributes().PutStr("sandbox.operation", "exec")
	rec.Attributes().PutEmptyBytes("sandbox.exec.stdout_bytes").FromRaw([]byte(redacttest.Text()))
	return ld
}

// TestSinksRedactByTheirPolicy: the file sink redacts (the default, plus
// the user's rules), the HTTP sink whose level turns redaction off sends
// the reference's line in clear and is warned about at start; the cuts are
// counted by kind, and nothing logged holds a secret.
func TestSinksRedactByTheirPolicy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	rec := newRecorder(t, nil)
	cfg := syncConfig()
	cfg.PayloadPolicy = auditevent.PolicyOverride{
		IncludeExecOutput: auditevent.Ptr(true),
		Redact:            auditevent.RedactOverride{Patterns: []string{redacttest.UserPattern}, Keys: []string{redacttest.UserKey}},
	}
	withFile(cfg, path, auditevent.PolicyOverride{})
	withHTTP(cfg, rec.srv.URL, "event", auditevent.PolicyOverride{Redact: auditevent.RedactOverride{Enabled: auditevent.Ptr(false)}})
	core, logs := observer.New(zapcore.DebugLevel)
	te := startExportersWithLogger(t, cfg, zap.New(core))

	require.NoError(t, te.logs.ConsumeLogs(context.Background(), secretLogs(t)))

	lines := readLines(t, path)
	require.Len(t, lines, 1)
	for _, secret := range redacttest.Secrets() {
		assert.NotContains(t, lines[0], jsonText(t, secret))
	}
	ev, err := auditevent.Decode([]byte(strings.TrimSuffix(lines[0], "\n")))
	require.NoError(t, err)
	assert.Equal(t, lines[0], string(auditevent.Line(&ev)), "a canonical line")
	assert.Contains(t, *ev.Stdout, "[REDACTED:pem_private_key]")
	assert.Contains(t, *ev.ErrorMessage, "[REDACTED:custom_pattern]")
	assert.Contains(t, ev.Data.String(), `"DB_PASSWORD":"[REDACTED:password]"`)

	sent := rec.acceptedBodies()
	assert.Contains(t, sent, redacttest.GitHubToken, "redaction off for the HTTP sink")
	assert.Contains(t, sent, jsonText(t, redacttest.PEMBlock))

	assert.Equal(t, int64(3), te.counter(t, "otelcol_sandboxaudit_exporter_secrets_redacted", "kind", "pem_private_key"), "argv, error message, stdout")
	assert.Equal(t, int64(4), te.counter(t, "otelcol_sandboxaudit_exporter_secrets_redacted", "kind", "password"), "--password, DB_PASSWORD, twice in text")

	warned := logs.FilterMessageSnippet("redact is off").All()
	require.NotEmpty(t, warned)
	assert.Equal(t, "http", warned[0].ContextMap()["sink"])
	for _, entry := range logs.All() {
		for _, secret := range redacttest.Secrets() {
			assert.NotContains(t, entry.Message, secret)
			for _, v := range entry.ContextMap() {
				assert.NotContains(t, jsonOf(t, v), secret)
			}
		}
	}
}

// TestBadRedactConfigNamesTheKey: a pattern that is no RE2 expression
// stops the exporter at start, the error naming the sink's key and index.
func TestBadRedactConfigNamesTheKey(t *testing.T) {
	cfg := syncConfig()
	withFile(cfg, filepath.Join(t.TempDir(), "e.jsonl"), auditevent.PolicyOverride{
		Redact: auditevent.RedactOverride{Allow: []string{"ok", "x", "a[b"}},
	})
	err := cfg.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "file::payload_policy::redact::allow[2]: not an RE2 expression")
}

// jsonText is s as it appears inside a canonical line's string.
func jsonText(t *testing.T, s string) string {
	t.Helper()
	d, err := auditevent.MarshalData(map[string]any{"s": s})
	require.NoError(t, err)
	return strings.TrimSuffix(strings.TrimPrefix(d.String(), `{"s":"`), `"}`)
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
