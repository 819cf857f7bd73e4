package sandboxauditprocessor

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// mapBodyJSON holds credentials where the redactor finds them by their
// place: under a secret name at several depths, in a shell command, after
// an argv flag, in an Authorization member, and as a token in a list.
var mapBodyJSON = `{"op":"exec",` +
	`"command":"PGPASSWORD=hunter2 psql -h db",` +
	`"argv":["mysql","--password","hunter3","-u","root"],` +
	`"env":{"DB":{"password":"hunter4","host":"db"},"note":"plain"},` +
	`"headers":{"Authorization":"Bearer abcdef0123456789abcdef"},` +
	`"tokens":[["` + redacttest.GitHubToken + `"],{"k":"` + redacttest.SlackToken + `"}],` +
	`"count":3,"ok":true}`

// TestLogsGovernedMapBodyIsRedactedAsJSON: a record the policy governs
// whose body is a map (a logging bridge's structured message) has its
// credentials cut at every depth, as the same members in a JSON text body
// are: the member names give the same context, and they stay.
func TestLogsGovernedMapBodyIsRedactedAsJSON(t *testing.T) {
	fromMap := cutAsTextAndMap(t, mapBodyJSON,
		"hunter2", "hunter3", "hunter4", "abcdef0123456789abcdef", redacttest.GitHubToken, redacttest.SlackToken)
	assert.Equal(t, "plain", fromMap["env"].(map[string]any)["note"])
	assert.Equal(t, "db", fromMap["env"].(map[string]any)["DB"].(map[string]any)["host"])

	// Redaction off: the map passes as it is, less its output members.
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(mapBodyJSON), &raw))
	ld, lr := oneRecord()
	lr.SetEventName("app.exec")
	require.NoError(t, lr.Body().SetEmptyMap().FromRaw(raw))
	putSandbox(lr.Attributes(), "exec")
	assert.Contains(t, recordText(t, records(processLogs(t, redactionOff(), ld)).At(0)), "hunter4")
}

// TestLogsGovernedListBodyIsRedacted: a list body (an argv) is cut as the
// same list in a JSON body's member.
func TestLogsGovernedListBodyIsRedacted(t *testing.T) {
	ld, lr := oneRecord()
	lr.SetEventName("app.exec")
	require.NoError(t, lr.Body().SetEmptySlice().FromRaw([]any{"mysql", "--password", "hunter5", "-u", "root"}))
	putSandbox(lr.Attributes(), "exec")
	got := records(processLogs(t, createDefaultConfig().(*Config), ld)).At(0).Body().AsRaw()
	assert.Equal(t, []any{"mysql", "--password", "[REDACTED:password]", "-u", "root"}, got)
}

// cutAsTextAndMap processes body under the default config as a JSON text
// body and as the same members in a map body, checks that the map body
// keeps none of secrets and is cut as the text is, and returns it as JSON
// reads it.
func cutAsTextAndMap(t *testing.T, body string, secrets ...string) map[string]any {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	ld, lr := oneRecord()
	lr.SetEventName("app.exec")
	lr.Body().SetStr(body)
	putSandbox(lr.Attributes(), "exec")
	var fromText map[string]any
	require.NoError(t, json.Unmarshal([]byte(records(processLogs(t, cfg, ld)).At(0).Body().Str()), &fromText))

	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &raw))
	ld, lr = oneRecord()
	lr.SetEventName("app.exec")
	require.NoError(t, lr.Body().SetEmptyMap().FromRaw(raw))
	putSandbox(lr.Attributes(), "exec")
	got := records(processLogs(t, cfg, ld)).At(0)
	text := recordText(t, got)
	for _, secret := range secrets {
		assert.NotContains(t, text, secret)
	}
	b, err := json.Marshal(got.Body().AsRaw())
	require.NoError(t, err)
	var fromMap map[string]any
	require.NoError(t, json.Unmarshal(b, &fromMap))
	assert.Equal(t, fromText, fromMap, "cut as the same JSON text is")
	return fromMap
}
