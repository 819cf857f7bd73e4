package sandboxauditprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/payloadpolicy"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
)

// TestCutOutputIsRedactedOnce: raw output kept under a character limit is
// redacted, then cut, as the exporter does it; the cut text, which may end
// in the middle of a marker or of a header name, is not scanned again. So
// the backend gets the exporter's stdout, within the limit.
func TestCutOutputIsRedactedOnce(t *testing.T) {
	for _, c := range []struct {
		max int
		out string
	}{
		{12, "password=hunter2hunter2 and more"},
		{20, "Authorization: Bearer abcdefghijklmnop0123456789 tail"},
	} {
		cfg := createDefaultConfig().(*Config)
		cfg.PayloadPolicy.IncludeExecOutput = auditevent.Ptr(true)
		cfg.PayloadPolicy.MaxStdoutChars = auditevent.Ptr(c.max)
		table, err := payloadpolicy.NewTable(auditevent.PolicySet{Default: cfg.PayloadPolicy})
		require.NoError(t, err)
		span := fuzzSpan(`{"command":["cat"]}`, "", "", "", []byte(c.out), "")
		evs, err := spanmap.NewMapper(0).AppendSpanEvents(nil, span.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0), nil)
		require.NoError(t, err)
		var file []byte
		var cuts redact.Counts
		for i := range evs {
			file = table.Get("exec").AppendLine(file, &evs[i], &cuts)
		}
		backend := lines(t, process(t, cfg, fuzzSpan(`{"command":["cat"]}`, "", "", "", []byte(c.out), "")), keepAll())
		assert.Equal(t, string(file), backend, "max_stdout_chars %d", c.max)
	}
}
