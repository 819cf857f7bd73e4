package sandboxauditexporter

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestResentBatchIsWrittenToTheFileOnce: while the HTTP endpoint is down
// and the spool is full, each push of a batch is written to the file and
// then fails (the receiver would answer 503 and the client resend it). Ten
// resends leave one copy in the file, for a plain and a templated path;
// once the endpoint is back, the resend reaches it and the file still has
// one copy.
func TestResentBatchIsWrittenToTheFileOnce(t *testing.T) {
	for _, templated := range []bool{false, true} {
		t.Run(fmt.Sprintf("templated=%v", templated), func(t *testing.T) {
			var up atomic.Bool
			rec := newRecorder(t, func(int) int {
				if up.Load() {
					return http.StatusOK
				}
				return http.StatusServiceUnavailable
			})
			dir := t.TempDir()
			path := filepath.Join(dir, "events.jsonl")
			if templated {
				path = filepath.Join(dir, "{session_id}.jsonl")
			}
			cfg := syncConfig()
			withFile(cfg, path, auditevent.PolicyOverride{})
			hc := withHTTP(cfg, rec.srv.URL, "ndjson", auditevent.PolicyOverride{})
			sc := hc.Spool.GetOrInsertDefault()
			sc.Path = filepath.Join(dir, "spool.jsonl")
			sc.MaxSize = 100 // smaller than one line: always full
			sc.ReplayInterval = 20 * time.Millisecond
			te := startExporters(t, cfg)
			filePath := filepath.Join(dir, "events.jsonl")
			if templated {
				filePath = filepath.Join(dir, sessionA+".jsonl")
			}

			for i := range 10 {
				err := te.logs.ConsumeLogs(context.Background(), buildAuditLogs())
				require.Error(t, err, "push %d", i)
				assert.ErrorContains(t, err, "spool is full")
			}
			assert.Len(t, readLines(t, filePath), 2, "ten resends, one copy of the two events")
			assert.Equal(t, int64(20), te.counter(t, "otelcol_sandboxaudit_exporter_events_dropped", "reason", "spool_full"))

			// Once the endpoint is back (the sink notices within a replay
			// interval), a resend is accepted; the attempts until then do not
			// touch the file either.
			up.Store(true)
			require.Eventually(t, func() bool {
				return te.logs.ConsumeLogs(context.Background(), buildAuditLogs()) == nil
			}, 10*time.Second, 20*time.Millisecond)
			assert.Len(t, readLines(t, filePath), 2)
			assert.Equal(t, readLines(t, filePath), splitAfterNL(rec.acceptedBodies()), "the endpoint got the same two lines")
		})
	}
}

func splitAfterNL(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		if i < len(s) {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// TestResentBatchIsSentToTheEndpointOnce: while the audit file's disk is
// full, each push of a batch reaches the endpoint and then fails (the
// client resends it). Ten resends leave the endpoint one copy; before,
// each resend gave it another.
func TestResentBatchIsSentToTheEndpointOnce(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	rec := newRecorder(t, func(int) int { return http.StatusOK })
	cfg := syncConfig()
	withFile(cfg, "/dev/full", auditevent.PolicyOverride{})
	cfg.File.Get().Fsync = "never"
	withHTTP(cfg, rec.srv.URL, "ndjson", auditevent.PolicyOverride{})
	te := startExporters(t, cfg)
	for i := range 10 {
		err := te.logs.ConsumeLogs(context.Background(), buildAuditLogs())
		require.ErrorIs(t, err, syscall.ENOSPC, "push %d", i)
	}
	assert.Len(t, splitAfterNL(rec.acceptedBodies()), 2, "ten resends, one copy of the two events at the endpoint")
	assert.Equal(t, int64(2), te.counter(t, "otelcol_sandboxaudit_exporter_events_written", "sink", "http"))
}
