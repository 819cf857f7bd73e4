package sandboxauditprocessor

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// keyedBodyJSON keys members by credentials, at two depths, two of them
// cutting to the same name.
var keyedBodyJSON = `{"` + redacttest.GitHubToken + `":"k","env":{"DB_PASSWORD=hunter2hunter2":1,` +
	`"[REDACTED:github_token]":0,"` + redacttest.GitHubToken + `":2},"note":"plain"}`

// TestLogsMapBodyNamesAreCutAsJSON: a map body's member names that hold a
// credential are cut as the same names in a JSON text body are, collisions
// numbered alike, so the backend never gets them in clear.
func TestLogsMapBodyNamesAreCutAsJSON(t *testing.T) {
	fromMap := cutAsTextAndMap(t, keyedBodyJSON, "hunter2hunter2", redacttest.GitHubToken)
	assert.Equal(t, map[string]any{"DB_PASSWORD=[REDACTED:password]": 1.0, "[REDACTED:github_token]": 0.0,
		"[REDACTED:github_token] #2": 2.0}, fromMap["env"])
	assert.Equal(t, "k", fromMap["[REDACTED:github_token]"])
}

// TestLogsMapBodyCollisionsNumberedInNameOrder: two names that cut to the
// same text are numbered in the order of their names, as Data numbers them
// in canonical text, not in the map's insertion order; so a map body gives
// the same members whatever order its producer inserted them in.
func TestLogsMapBodyCollisionsNumberedInNameOrder(t *testing.T) {
	const tokA = "ghp_" + "A8sTq2VwXyZ1aBcDeFgHiJkLmNoPqRsTuV4w"
	const tokB = "ghp_" + "B8sTq2VwXyZ1aBcDeFgHiJkLmNoPqRsTuV4w"
	cfg := createDefaultConfig().(*Config)
	ld, lr := oneRecord()
	lr.SetEventName("app.exec")
	lr.Body().SetStr(`{"` + tokB + `":2,"` + tokA + `":1}`)
	putSandbox(lr.Attributes(), "exec")
	var fromText map[string]any
	require.NoError(t, json.Unmarshal([]byte(records(processLogs(t, cfg, ld)).At(0).Body().Str()), &fromText))
	assert.Equal(t, map[string]any{"[REDACTED:github_token]": 1.0, "[REDACTED:github_token] #2": 2.0}, fromText)

	ld, lr = oneRecord()
	lr.SetEventName("app.exec")
	body := lr.Body().SetEmptyMap()
	body.PutInt(tokB, 2) // inserted before tokA, which sorts first
	body.PutInt(tokA, 1)
	putSandbox(lr.Attributes(), "exec")
	assert.Equal(t, map[string]any{"[REDACTED:github_token]": int64(1), "[REDACTED:github_token] #2": int64(2)},
		records(processLogs(t, cfg, ld)).At(0).Body().Map().AsRaw())
}
