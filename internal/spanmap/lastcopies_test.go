package spanmap

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func TestKeepLastCopies(t *testing.T) {
	var kvs []string
	for _, kv := range [][2]string{
		{"sandbox.operation", "read"}, {"other", "1"}, {"sandbox.exec.stdout", "a"},
		{"other", "2"}, {"sandbox.exec.stdout", "b"}, {"sandbox.exec.stdout", "c"}, {"sandbox.operation", "exec"},
	} {
		kvs = append(kvs, `{"key":"`+kv[0]+`","value":{"stringValue":"`+kv[1]+`"}}`)
	}
	// The wire format keeps every copy; pcommon.Map's Put would not.
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(
		`{"resourceSpans":[{"scopeSpans":[{"spans":[{"attributes":[` + strings.Join(kvs, ",") + `]}]}]}]}`))
	require.NoError(t, err)
	m := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
	require.Equal(t, 7, m.Len())

	KeepLastCopies(m)
	var got [][2]string
	for k, v := range m.All() {
		got = append(got, [2]string{k, v.Str()})
	}
	assert.Equal(t, [][2]string{
		{"other", "1"}, {"other", "2"}, {"sandbox.exec.stdout", "c"}, {"sandbox.operation", "exec"},
	}, got, "the last copy of each mapped attribute, in order; other keys untouched")
}
