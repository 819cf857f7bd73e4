package sandboxauditprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// dupKeyData names a key twice: the exporter reads the last copy, which
// holds nothing to cut; the first holds a secret.
var dupKeyData = `{"note":"token ` + redacttest.GitHubToken + `","note":1}`

// TestDataWithAKeyNamedTwiceReachesTheBackendAsTheExporterReadsIt: a data
// attribute whose JSON names a key twice passes as the canonical object
// the exporter writes, not as sent, so the earlier copy's secret does not
// reach the backend though the copy the exporter keeps has nothing to cut.
func TestDataWithAKeyNamedTwiceReachesTheBackendAsTheExporterReadsIt(t *testing.T) {
	got := run(t, createDefaultConfig().(*Config), execSpan(map[string]any{
		"sandbox.start_data":  dupKeyData,
		"sandbox.finish_data": dupKeyData,
	}))
	assert.Equal(t, `{"note":1}`, got["sandbox.start_data"])
	assert.Equal(t, `{"note":1}`, got["sandbox.finish_data"])
}

// TestLogsBodyWithAKeyNamedTwice: the text body of a record the policy
// governs, JSON that names a key twice, reaches the backend without the
// earlier copy's secret.
func TestLogsBodyWithAKeyNamedTwice(t *testing.T) {
	ld, lr := oneRecord()
	lr.SetEventName("app.exec")
	lr.Body().SetStr(dupKeyData)
	putSandbox(lr.Attributes(), "exec")
	got := records(processLogs(t, userRules(), ld)).At(0)
	assertNoSecret(t, recordText(t, got))
}
