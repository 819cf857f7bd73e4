package sandboxauditprocessor

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

// The exporter's sink keys are not the processor's: each is named by its
// path, in path order, beside a misspelt key of a per-op level.
func TestUnknownKeysOfAnotherComponentAreNamed(t *testing.T) {
	err := confmap.NewFromStringMap(map[string]any{
		"genai_attributes":     true,
		"file":                 map[string]any{"path": "./x.jsonl"},
		"max_line_bytes":       4096,
		"payload_policy_by_op": map[string]any{"exec": map[string]any{"include_exec_ouput": true}},
	}).Unmarshal(NewFactory().CreateDefaultConfig())
	require.Error(t, err)
	require.Contains(t, err.Error(), "'' file: unknown key\nmax_line_bytes: unknown key\npayload_policy_by_op::exec::include_exec_ouput: unknown key")
}
