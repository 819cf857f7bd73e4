package payloadpolicy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

func TestCheckOpsNamesEveryUnknownKeyOnce(t *testing.T) {
	require.NoError(t, CheckOps(nil))
	require.NoError(t, CheckOps(map[string]auditevent.PolicyOverride{"exec": {}, "write": {}}))

	err := CheckOps(map[string]auditevent.PolicyOverride{"teleport": {}, "exec": {}, "a!": {}, "a": {}})
	require.Error(t, err)
	assert.Regexp(t, `^payload_policy_by_op: unknown op "a", "a!", "teleport" \(known: [a-z_, ]*exec[a-z_, ]*\)$`, err.Error())

	cfg := &Config{PayloadPolicyByOp: map[string]auditevent.PolicyOverride{"teleport": {}}}
	assert.EqualError(t, cfg.Validate(), CheckOps(cfg.PayloadPolicyByOp).Error())
}

func TestTableResolvesEachOpOnce(t *testing.T) {
	set := auditevent.PolicySet{
		Default: auditevent.PolicyOverride{MaxStdoutChars: auditevent.Ptr(10)},
		ByOp:    map[string]auditevent.PolicyOverride{"exec": {IncludeExecOutput: auditevent.Ptr(true)}},
		Sink:    auditevent.PolicyOverride{IncludeWriteLen: auditevent.Ptr(false)},
	}
	tab := mustTable(t, set)
	assert.Equal(t, auditevent.Policy{IncludeExecOutput: true, MaxStdoutChars: 10, MaxStderrChars: 8000, IncludeWriteLen: false}, tab.Get("exec").Policy)
	assert.Equal(t, auditevent.Policy{IncludeExecOutput: false, MaxStdoutChars: 10, MaxStderrChars: 8000, IncludeWriteLen: false}, tab.Get("write").Policy)
	assert.Equal(t, tab.Get("write"), tab.Get("an op of a later format version"), "an unknown op gets the levels without a per-op one")

	assert.True(t, tab.Equal(mustTable(t, set)))
	set.ByOp = nil
	assert.False(t, tab.Equal(mustTable(t, set)), "exec differs")
}

// TestUnmarshalRefusesAFractionalLimit: the processor's and the
// extension's policy keys refuse what the decoder would truncate.
func TestUnmarshalRefusesAFractionalLimit(t *testing.T) {
	var cfg Config
	err := confmap.NewFromStringMap(map[string]any{
		"payload_policy_by_op": map[string]any{"exec": map[string]any{"max_stdout_chars": 1.5}},
	}).Unmarshal(&cfg)
	if err == nil || !strings.Contains(err.Error(), "payload_policy_by_op::exec::max_stdout_chars: must be a whole number") {
		t.Fatalf("Unmarshal = %v", err)
	}
}

func mustTable(t *testing.T, set auditevent.PolicySet) *Table {
	t.Helper()
	tab, err := NewTable(set)
	require.NoError(t, err)
	return tab
}
