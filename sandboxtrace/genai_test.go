package sandboxtrace_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

var genAIKeys = []string{"gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.tool.type", "openinference.span.kind"}

func TestGenAIAttributesByDefault(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t)
	_, err := s.Exec(context.Background(), sandboxtrace.ExecRequest{Command: []string{"cat", "/etc/shadow"}}, runs(sandboxtrace.ExecResult{Stdout: []byte("x")}, nil))
	require.NoError(t, err)
	a := attrs(r.only(t))
	assert.Equal(t, "execute_tool", a["gen_ai.operation.name"].AsString())
	assert.Equal(t, "sandbox.exec", a["gen_ai.tool.name"].AsString())
	assert.Equal(t, "function", a["gen_ai.tool.type"].AsString())
	assert.Equal(t, "TOOL", a["openinference.span.kind"].AsString())
	for k, v := range a {
		if k == "sandbox.start_data" || k == "sandbox.finish_data" {
			continue
		}
		assert.NotContains(t, fmt.Sprint(v.AsInterface()), "/etc/shadow", "%s: arguments stay in the payload data", k)
	}
}

func TestGenAIAttributesOff(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t, sandboxtrace.WithGenAIAttributes(false))
	require.NoError(t, s.Read(context.Background(), "/w", nil, nothing))
	a := attrs(r.only(t))
	for _, k := range genAIKeys {
		assert.NotContains(t, a, k)
	}
}

func TestGenAIToolNameIsTheSpanName(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t)
	require.NoError(t, s.Read(context.Background(), "/w", nil, nothing))
	span := r.only(t)
	assert.Equal(t, span.Name, attrs(span)["gen_ai.tool.name"].AsString())
}
