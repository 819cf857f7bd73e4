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

// TestCheckRedactUsedNamesALevelThatNeverApplies: a level that writes
// patterns (or keys, allow, hash_key_file) where redaction is off for
// every op and sink it reaches was taken, and its patterns never cut
// anything: payload_policy: {redact: {enabled: false}} under
// payload_policy_by_op: {exec: {redact: {patterns: [...]}}} wrote exec's
// secrets in clear.
func TestCheckRedactUsedNamesALevelThatNeverApplies(t *testing.T) {
	off := auditevent.PolicyOverride{Redact: auditevent.RedactOverride{Enabled: auditevent.Ptr(false)}}
	on := auditevent.PolicyOverride{Redact: auditevent.RedactOverride{Enabled: auditevent.Ptr(true)}}
	pats := auditevent.PolicyOverride{Redact: auditevent.RedactOverride{Patterns: []string{"secret"}}}
	offPats := auditevent.PolicyOverride{Redact: auditevent.RedactOverride{Enabled: auditevent.Ptr(false), Keys: []string{"k"}}}
	noSink := map[string]auditevent.PolicyOverride{"": {}}

	err := CheckRedactUsed(off, map[string]auditevent.PolicyOverride{"exec": pats}, noSink)
	require.EqualError(t, err, "payload_policy_by_op::exec::redact: patterns written, but redaction is off (redact.enabled: false) wherever this level applies, so they never apply")
	err = CheckRedactUsed(offPats, nil, noSink)
	require.EqualError(t, err, "payload_policy::redact: keys written, but redaction is off (redact.enabled: false) wherever this level applies, so they never apply")
	err = CheckRedactUsed(auditevent.PolicyOverride{}, nil, map[string]auditevent.PolicyOverride{"file::payload_policy": offPats})
	require.EqualError(t, err, "file::payload_policy::redact: keys written, but redaction is off (redact.enabled: false) wherever this level applies, so they never apply")

	// Used somewhere: an op or a sink turns redaction back on.
	require.NoError(t, CheckRedactUsed(offPats, map[string]auditevent.PolicyOverride{"exec": on}, noSink))
	require.NoError(t, CheckRedactUsed(offPats, nil, map[string]auditevent.PolicyOverride{"file::payload_policy": {}, "http::payload_policy": on}))
	require.NoError(t, CheckRedactUsed(pats, map[string]auditevent.PolicyOverride{"exec": off}, noSink))
	// A list written empty clears the level below; nothing is left unused.
	empty := auditevent.PolicyOverride{Redact: auditevent.RedactOverride{Enabled: auditevent.Ptr(false), Patterns: []string{}}}
	require.NoError(t, CheckRedactUsed(empty, nil, noSink))
}
