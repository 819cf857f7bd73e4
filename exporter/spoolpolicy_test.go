package sandboxauditexporter

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestSpoolKeepsThePolicyItWasWrittenUnder: lines spooled under a policy
// that kept exec output are final audit lines; after a restart with a
// stricter HTTP policy they are replayed as they were spooled, and only
// the lines taken afterwards follow the new policy (docs/spool.md,
// "Policy changes").
func TestSpoolKeepsThePolicyItWasWrittenUnder(t *testing.T) {
	rec := newRecorder(t, nil)
	spool := filepath.Join(t.TempDir(), "spool.jsonl")
	config := func(endpoint string, policy auditevent.PolicyOverride) *Config {
		cfg := syncConfig()
		sc := withHTTP(cfg, endpoint, "ndjson", policy).Spool.GetOrInsertDefault()
		sc.Path = spool
		sc.ReplayInterval = 20 * time.Millisecond
		require.NoError(t, cfg.Validate())
		return cfg
	}
	ctx := context.Background()

	// Nothing listens at the first endpoint, so every line is spooled and
	// no request is left half sent at shutdown.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + ln.Addr().String() + "/v1/sandbox/events"
	require.NoError(t, ln.Close())
	loose, err := NewFactory().CreateTraces(ctx, exportertestSettings(),
		config(closed, auditevent.PolicyOverride{IncludeExecOutput: auditevent.Ptr(true)}))
	require.NoError(t, err)
	require.NoError(t, loose.Start(ctx, nopHost()))
	require.NoError(t, loose.ConsumeTraces(ctx, buildTraces(t, sampleSpans()...)))
	require.NoError(t, loose.Shutdown(ctx))
	withOutput := expectedDefault(t)
	withOutput[1] = canonical(t, execFinishJSON(`"hello\n"`, `"warn\ufffd"`))
	require.Equal(t, withOutput, readLines(t, spool), "spooled under the policy that kept output")

	te := startExporters(t, config(rec.srv.URL, auditevent.PolicyOverride{}))
	require.Eventually(t, func() bool {
		return te.counter(t, "otelcol_sandboxaudit_exporter_events_replayed", "", "") == 6
	}, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, strings.Join(withOutput, ""), rec.acceptedBodies(), "replayed as spooled")

	// The same spans again make new lines, which may queue behind the
	// spool's until its replay round ends.
	require.NoError(t, te.traces.ConsumeTraces(ctx, buildTraces(t, sampleSpans()...)))
	require.Eventually(t, func() bool {
		return strings.Count(rec.acceptedBodies(), "\n") >= 12
	}, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, strings.Join(withOutput, "")+strings.Join(expectedDefault(t), ""), rec.acceptedBodies(),
		"a line taken after the restart follows the stricter policy")
}
