package sandboxauditexporter

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

// An operator's misspelt key is named by its path, each once, never by the
// Go type holding it; a header or op that happens to share the name is not.
func TestUnknownKeyIsNamedByItsPath(t *testing.T) {
	conf := confmap.NewFromStringMap(map[string]any{
		"file": map[string]any{"path": "./x.jsonl", "bogus": 1},
		"http": map[string]any{
			"endpoint": "http://127.0.0.1:1",
			"bogus":    2,
			"headers":  map[string]any{"bogus": "x"},
			"spool":    map[string]any{"path": "./s.jsonl", "maxsize": 3},
		},
		"payload_policy_by_op": map[string]any{"exec": map[string]any{"bogus": true}},
	})
	err := conf.Unmarshal(NewFactory().CreateDefaultConfig())
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{"file::bogus: unknown key", "http::bogus: unknown key",
		"http::spool::maxsize: unknown key", "payload_policy_by_op::exec::bogus: unknown key"} {
		assert.Equal(t, 1, strings.Count(msg, want), "%q once in %s", want, msg)
	}
	assert.NotContains(t, msg, "headers::bogus")
	assert.NotContains(t, msg, "sandboxauditexporter.")
	assert.NotContains(t, msg, "has invalid keys")
}
