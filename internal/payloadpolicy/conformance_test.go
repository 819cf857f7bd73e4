package payloadpolicy

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/conformance"
)

// TestConformanceVectorsPassRedacted: every encode and policy vector gives
// the reference's line under the sinks' policy with redaction on (the
// default), and nothing is cut: no vector holds what a default detector
// takes for a secret.
func TestConformanceVectorsPassRedacted(t *testing.T) {
	vectors, err := conformance.LoadAll()
	require.NoError(t, err)
	n := 0
	for _, v := range vectors {
		if v.Kind != "encode" && v.Kind != "policy" {
			continue
		}
		want, err := v.ExpectString()
		require.NoError(t, err, v.Source)
		ev, err := auditevent.Decode([]byte(v.Input))
		require.NoError(t, err, v.Source)
		set := auditevent.PolicySet{ByOp: v.PolicyByOp}
		if v.Kind == "encode" {
			// the encode vectors keep every field: output included, no limit
			set.Default = auditevent.PolicyOverride{IncludeExecOutput: auditevent.Ptr(true)}
		}
		if v.Policy != nil {
			set.Default = *v.Policy
		}
		if v.SinkPolicy != nil {
			set.Sink = *v.SinkPolicy
		}
		ev.StdoutBytes, ev.StderrBytes = b64(t, v.StdoutB64), b64(t, v.StderrB64)
		tab, err := NewTable(set)
		require.NoError(t, err)
		pol := tab.Get(ev.Op)
		require.NotNil(t, pol.Redactor, "redaction is on by default")
		var cuts redact.Counts
		assert.Equal(t, want, string(pol.AppendLine(nil, &ev, &cuts)), v.Source)
		assert.Zero(t, cuts.Total(), "%s: cut %v", v.Source, cuts)
		n++
	}
	require.Greater(t, n, 20, "vectors used")
}

func b64(t *testing.T, s *string) []byte {
	t.Helper()
	if s == nil {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(*s)
	require.NoError(t, err)
	if b == nil {
		b = []byte{}
	}
	return b
}
