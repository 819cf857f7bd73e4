package payloadpolicy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

func secretFinish(t *testing.T) auditevent.Event {
	t.Helper()
	data, err := auditevent.MarshalData(map[string]any{"command": redacttest.Argv(), "env": redacttest.Env(), "bytes": 12})
	require.NoError(t, err)
	return auditevent.Event{
		Version: 1, Op: "exec", Phase: auditevent.PhaseFinish, SpanID: "00f067aa0ba902b7", Seq: 2,
		Data: data, ErrorMessage: auditevent.Ptr(redacttest.Text()),
		StdoutBytes: []byte(redacttest.Text()), Stderr: auditevent.Ptr(redacttest.Text()),
	}
}

// TestApplyRedactsEveryField: data, error_message, stdout decoded from raw
// bytes and stderr already text lose every secret; the copy holds no raw
// bytes; the payload policy still applies (data.bytes removed, output cut);
// the event itself is untouched.
func TestApplyRedactsEveryField(t *testing.T) {
	tab, err := NewTable(auditevent.PolicySet{Default: auditevent.PolicyOverride{
		IncludeExecOutput: auditevent.Ptr(true), IncludeWriteLen: auditevent.Ptr(false), MaxStderrChars: auditevent.Ptr(40),
		Redact: auditevent.RedactOverride{Patterns: []string{redacttest.UserPattern}, Keys: []string{redacttest.UserKey}},
	}})
	require.NoError(t, err)
	ev := secretFinish(t)
	orig := ev.Clone()
	var cuts redact.Counts
	out := tab.Get("exec").Apply(&ev, &cuts)
	assert.Equal(t, orig, ev, "the event is not modified")
	assert.Nil(t, out.StdoutBytes)
	assert.Nil(t, out.StderrBytes)
	_, hasBytes := out.Data.Lookup("bytes")
	assert.False(t, hasBytes)
	assert.False(t, strings.HasSuffix(*out.Stderr, auditevent.Ellipsis), "text without raw bytes is not cut to the limit")
	line := string(auditevent.Line(&out))
	for _, secret := range redacttest.Secrets() {
		assert.NotContains(t, line, secret)
	}
	for _, field := range []string{*out.ErrorMessage, *out.Stdout, out.Data.String()} {
		assert.Contains(t, field, "[REDACTED:")
	}
	assert.Greater(t, cuts.Total(), 20)
	assert.Equal(t, line, string(tab.Get("exec").AppendLine(nil, &ev, nil)), "AppendLine writes Apply's copy")

	decoded, err := auditevent.Decode([]byte(strings.TrimSuffix(line, "\n")))
	require.NoError(t, err)
	assert.Equal(t, line, string(auditevent.Line(&decoded)), "the line is canonical")
}

// TestRedactionOffIsTheSpec: enabled false at any level gives the payload
// policy alone, byte for byte, and the level above can turn it on again.
func TestRedactionOffIsTheSpec(t *testing.T) {
	off := auditevent.RedactOverride{Enabled: auditevent.Ptr(false)}
	set := auditevent.PolicySet{
		Default: auditevent.PolicyOverride{IncludeExecOutput: auditevent.Ptr(true)},
		ByOp:    map[string]auditevent.PolicyOverride{"exec": {Redact: off}},
	}
	tab, err := NewTable(set)
	require.NoError(t, err)
	ev := secretFinish(t)
	pol := tab.Get("exec")
	require.Nil(t, pol.Redactor)
	want := pol.Policy.Apply(&ev)
	assert.Equal(t, string(auditevent.Line(&want)), string(pol.AppendLine(nil, &ev, nil)))
	assert.NotNil(t, tab.Get("read").Redactor)
	assert.Equal(t, []string{"exec"}, tab.RedactionOff())

	set.Sink = auditevent.PolicyOverride{Redact: auditevent.RedactOverride{Enabled: auditevent.Ptr(true)}}
	tab, err = NewTable(set)
	require.NoError(t, err)
	assert.NotNil(t, tab.Get("exec").Redactor, "the sink level turns it on again")
	assert.Empty(t, tab.RedactionOff())
}

// TestLevelsOverrideOnlyWhatTheySet: a per-op list replaces the default's,
// and a level that sets nothing keeps the one below.
func TestLevelsOverrideOnlyWhatTheySet(t *testing.T) {
	set := auditevent.PolicySet{
		Default: auditevent.PolicyOverride{Redact: auditevent.RedactOverride{Patterns: []string{"AAA[0-9]+"}, Keys: []string{"k1"}}},
		ByOp:    map[string]auditevent.PolicyOverride{"exec": {Redact: auditevent.RedactOverride{Patterns: []string{"BBB[0-9]+"}}}},
	}
	assert.Equal(t, redact.Settings{Enabled: true, Patterns: []string{"BBB[0-9]+"}, Keys: []string{"k1"}}, RedactSettings(set, "exec"))
	assert.Equal(t, redact.Settings{Enabled: true, Patterns: []string{"AAA[0-9]+"}, Keys: []string{"k1"}}, RedactSettings(set, "read"))
	tab, err := NewTable(set)
	require.NoError(t, err)
	assert.Same(t, tab.Get("read").Redactor, tab.Get("write").Redactor, "one redactor per distinct policy")
	got, _ := tab.Get("exec").Redactor.String("AAA1 BBB2", nil)
	assert.Equal(t, "AAA1 [REDACTED:custom_pattern]", got)
}

// TestRedactKeysFromConfig: the redact section decodes from a collector
// config, and an empty list written at a level clears the level below.
func TestRedactKeysFromConfig(t *testing.T) {
	var cfg Config
	require.NoError(t, confmap.NewFromStringMap(map[string]any{
		"payload_policy": map[string]any{"redact": map[string]any{
			"patterns": []any{"AAA[0-9]+"}, "keys": []any{"k1"}, "allow": []any{"^x$"},
		}},
		"payload_policy_by_op": map[string]any{"exec": map[string]any{"redact": map[string]any{
			"patterns": []any{}, "enabled": true,
		}}},
	}).Unmarshal(&cfg))
	require.NoError(t, cfg.Validate())
	set := auditevent.PolicySet{Default: cfg.PayloadPolicy, ByOp: cfg.PayloadPolicyByOp}
	assert.Equal(t, []string{"AAA[0-9]+"}, RedactSettings(set, "read").Patterns)
	assert.Empty(t, RedactSettings(set, "exec").Patterns, "[] clears")
	assert.Equal(t, []string{"k1"}, RedactSettings(set, "exec").Keys, "keys not written stay")
}

// TestAppendLineIsApplysLine: for events with and without secrets, error
// messages and output, under policies that keep or drop output and write
// lengths, AppendLine writes the line of Apply's copy and counts the same
// cuts, including where it skips the copy.
func TestAppendLineIsApplysLine(t *testing.T) {
	clean := auditevent.MustParseData(`{"bytes":4096,"command":["ls","-la"],"cwd":"/workspace"}`)
	secret := auditevent.MustParseData(`{"command":["env","DB_PASSWORD=hunter2","ls"],"cwd":"/workspace"}`)
	var events []auditevent.Event
	for _, phase := range []auditevent.Phase{auditevent.PhaseStart, auditevent.PhaseFinish} {
		for _, data := range []auditevent.Data{clean, secret} {
			for _, errMsg := range []*string{nil, auditevent.Ptr("failed"), auditevent.Ptr("token=" + redacttest.GitHubToken)} {
				for _, out := range []*string{nil, auditevent.Ptr("Authorization: Bearer " + redacttest.GitHubToken)} {
					events = append(events, auditevent.Event{
						Version: 1, Op: "exec", Phase: phase, SpanID: "00f067aa0ba902b7", Seq: 2, Data: data,
						ErrorMessage: errMsg, Stdout: out, Stderr: out, StdoutBytes: []byte("password=hunter2\n"),
					})
				}
			}
		}
	}
	for name, o := range map[string]auditevent.PolicyOverride{
		"default":        {},
		"output":         {IncludeExecOutput: auditevent.Ptr(true)},
		"no write len":   {IncludeWriteLen: auditevent.Ptr(false)},
		"output, no len": {IncludeExecOutput: auditevent.Ptr(true), IncludeWriteLen: auditevent.Ptr(false)},
	} {
		tab, err := NewTable(auditevent.PolicySet{Default: o})
		require.NoError(t, err)
		pol := tab.Get("exec")
		for i := range events {
			var viaApply, viaAppend redact.Counts
			out := pol.Apply(&events[i], &viaApply)
			want := string(auditevent.Line(&out))
			assert.Equal(t, want, string(pol.AppendLine(nil, &events[i], &viaAppend)), "%s, event %d", name, i)
			assert.Equal(t, viaApply, viaAppend, "%s, event %d", name, i)
		}
	}
}
