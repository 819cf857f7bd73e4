package sandboxauditexporter

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// The file sink opts in to exec output, the HTTP sink keeps the default
// redaction: the same event must reach the two sinks differently.
func TestHTTPAndFilePoliciesDiffer(t *testing.T) {
	for _, format := range []string{"ndjson", "event"} {
		t.Run(format, func(t *testing.T) {
			rec := newRecorder(t, nil)
			path := filepath.Join(t.TempDir(), "events.jsonl")
			cfg := syncConfig()
			withFile(cfg, path, auditevent.PolicyOverride{IncludeExecOutput: auditevent.Ptr(true)})
			withHTTP(cfg, rec.srv.URL+"/v1/sandbox/events", format, auditevent.PolicyOverride{})
			te := startExporters(t, cfg)

			require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))

			redacted := expectedDefault(t)
			withOutput := expectedDefault(t)
			withOutput[1] = canonical(t, execFinishJSON(`"hello\n"`, `"warn\ufffd"`))
			assert.Equal(t, withOutput, readLines(t, path))

			reqs := rec.snapshot()
			switch format {
			case "ndjson":
				require.Len(t, reqs, 1, "one request for the whole batch")
				assert.Equal(t, "application/x-ndjson", reqs[0].contentType)
				assert.Equal(t, strings.Join(redacted, ""), reqs[0].body)
			case "event":
				require.Len(t, reqs, len(redacted), "one request per event")
				for i, r := range reqs {
					assert.Equal(t, "application/json", r.contentType)
					assert.Equal(t, strings.TrimSuffix(redacted[i], "\n"), r.body)
				}
			}
			assert.Equal(t, int64(6), te.counter(t, "otelcol_sandboxaudit_exporter_events_written", "sink", "http"))
			assert.Equal(t, int64(6), te.counter(t, "otelcol_sandboxaudit_exporter_events_written", "sink", "file"))
		})
	}
}

func TestHTTPOutageSpoolsThenReplays(t *testing.T) {
	var healthy atomic.Bool
	rec := newRecorder(t, func(int) int {
		if healthy.Load() {
			return http.StatusOK
		}
		return http.StatusServiceUnavailable
	})
	dir := t.TempDir()
	cfg := syncConfig()
	hc := withHTTP(cfg, rec.srv.URL, "ndjson", auditevent.PolicyOverride{})
	sc := hc.Spool.GetOrInsertDefault()
	sc.Path = filepath.Join(dir, "spool.jsonl")
	sc.ReplayInterval = 20 * time.Millisecond
	te := startExporters(t, cfg)

	// Retries are exhausted within the push; the lines go to the spool
	// and the push succeeds.
	require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))
	assert.Equal(t, int64(6), te.counter(t, "otelcol_sandboxaudit_exporter_events_spooled", "", ""))
	assert.Positive(t, te.counter(t, "otelcol_sandboxaudit_exporter_spool_size", "", ""))
	assert.Equal(t, expectedDefault(t), readLines(t, sc.Path), "the spool holds the canonical lines")

	healthy.Store(true)
	require.Eventually(t, func() bool {
		return te.counter(t, "otelcol_sandboxaudit_exporter_events_replayed", "", "") == 6
	}, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		return te.counter(t, "otelcol_sandboxaudit_exporter_spool_size", "", "") == 0
	}, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, int64(6), te.counter(t, "otelcol_sandboxaudit_exporter_events_written", "sink", "http"))

	// What the endpoint accepted is the canonical lines, each exactly
	// once and in order (the failed attempts carried them too, so only
	// answered-2xx requests count).
	assert.Equal(t, strings.Join(expectedDefault(t), ""), rec.acceptedBodies())
	// The file is rewritten empty a moment after the last offset is saved.
	assert.Eventually(t, func() bool { return len(readLines(t, sc.Path)) == 0 }, 10*time.Second, 10*time.Millisecond,
		"the spool file is emptied after replay")
}

func TestHTTPPermanentErrorDropsButFileIsWritten(t *testing.T) {
	rec := newRecorder(t, func(int) int { return http.StatusBadRequest })
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	withHTTP(cfg, rec.srv.URL, "ndjson", auditevent.PolicyOverride{})
	te := startExporters(t, cfg)

	err := te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...))
	require.Error(t, err)
	assert.True(t, consumererror.IsPermanent(err), "4xx is permanent: %v", err)
	assert.Equal(t, expectedDefault(t), readLines(t, path), "the file sink gets the batch regardless")
	assert.Len(t, rec.snapshot(), 1, "4xx is not retried")
	assert.Equal(t, int64(6), te.counter(t, "otelcol_sandboxaudit_exporter_events_dropped", "reason", "http_4xx"))
}

func TestHTTPFailureWithoutSpoolIsReturnedAndCounted(t *testing.T) {
	rec := newRecorder(t, func(int) int { return http.StatusServiceUnavailable })
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	withHTTP(cfg, rec.srv.URL, "ndjson", auditevent.PolicyOverride{})
	te := startExporters(t, cfg)

	err := te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...))
	require.ErrorContains(t, err, "http sink")
	assert.Greater(t, len(rec.snapshot()), 1, "retried per retry_on_failure")
	assert.Equal(t, expectedDefault(t), readLines(t, path))
	assert.Equal(t, int64(6), te.counter(t, "otelcol_sandboxaudit_exporter_events_dropped", "reason", "no_spool"))
}

// With exporterhelper's retry disabled a failing HTTP sink must not make the
// file sink write a batch twice, even with the queue enabled (the queue
// gets the error and must not resend the batch).
// When both sinks resolve to the same policy the batch is encoded once and
// the same lines go to both; a templated file path groups by session and
// is encoded on its own. Either way each sink gets exactly its lines.
func TestHTTPAndFileSamePolicy(t *testing.T) {
	optIn := auditevent.PolicyOverride{IncludeExecOutput: auditevent.Ptr(true)}
	for _, c := range []struct {
		name, file string
	}{
		{"plain path", "events.jsonl"},
		{"templated path", "{session_id}.jsonl"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := newRecorder(t, nil)
			dir := t.TempDir()
			cfg := syncConfig()
			withFile(cfg, filepath.Join(dir, c.file), optIn)
			withHTTP(cfg, rec.srv.URL, "ndjson", optIn)
			te := startExporters(t, cfg)
			require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))

			want := expectedDefault(t)
			want[1] = canonical(t, execFinishJSON(`"hello\n"`, `"warn\ufffd"`))
			var got []string
			for _, sid := range []string{sessionA, sessionB} {
				got = append(got, readLines(t, filepath.Join(dir, strings.ReplaceAll(c.file, "{session_id}", sid)))...)
				if !strings.Contains(c.file, "{") {
					break
				}
			}
			assert.Equal(t, want, got, "file lines (sessions in order of first appearance)")
			reqs := rec.snapshot()
			require.Len(t, reqs, 1)
			assert.Equal(t, strings.Join(want, ""), reqs[0].body)
			assert.Equal(t, int64(6), te.counter(t, "otelcol_sandboxaudit_exporter_events_written", "sink", "http"))
			assert.Equal(t, int64(6), te.counter(t, "otelcol_sandboxaudit_exporter_events_written", "sink", "file"))
		})
	}
}

func TestNoDuplicateFileLinesOnHTTPFailure(t *testing.T) {
	rec := newRecorder(t, func(int) int { return http.StatusServiceUnavailable })
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := createDefaultConfig().(*Config)
	cfg.QueueConfig.GetOrInsertDefault()
	cfg.RetryConfig.InitialInterval = 10 * time.Millisecond
	cfg.RetryConfig.MaxElapsedTime = 50 * time.Millisecond
	withFile(cfg, path, auditevent.PolicyOverride{})
	withHTTP(cfg, rec.srv.URL, "ndjson", auditevent.PolicyOverride{})
	te := startExporters(t, cfg)

	require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))
	require.Eventually(t, func() bool {
		return te.counter(t, "otelcol_sandboxaudit_exporter_events_dropped", "reason", "no_spool") == 6
	}, 10*time.Second, 10*time.Millisecond)
	// Give a (wrongly enabled) whole-batch retry time to show up.
	time.Sleep(200 * time.Millisecond)
	assert.Equal(t, expectedDefault(t), readLines(t, path))
}

// A full spool must fail the export visibly: the error reaches the caller
// (the queue is off by default, so the caller is upstream), an error is
// logged and the events are counted as dropped with the reason.
func TestHTTPFullSpoolFailsExportVisibly(t *testing.T) {
	rec := newRecorder(t, func(int) int { return http.StatusServiceUnavailable })
	cfg := syncConfig()
	hc := withHTTP(cfg, rec.srv.URL, "ndjson", auditevent.PolicyOverride{})
	sc := hc.Spool.GetOrInsertDefault()
	sc.Path = filepath.Join(t.TempDir(), "spool.jsonl")
	sc.MaxSize = 100 // smaller than one canonical line
	core, logs := observer.New(zapcore.InfoLevel)
	te := startExportersWithLogger(t, cfg, zap.New(core))

	err := te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...))
	require.Error(t, err)
	assert.ErrorContains(t, err, "spool is full")
	assert.False(t, consumererror.IsPermanent(err))
	assert.Equal(t, int64(6), te.counter(t, "otelcol_sandboxaudit_exporter_events_dropped", "reason", "spool_full"))
	assert.Zero(t, te.counter(t, "otelcol_sandboxaudit_exporter_events_spooled", "", ""))
	assert.Equal(t, 1, logs.FilterLevelExact(zapcore.ErrorLevel).FilterField(zap.String("reason", "spool_full")).Len())
	assert.Empty(t, readLines(t, sc.Path))
}

// TestDefaultsReturnFullSpoolToCaller: with the default config (no
// sending_queue) a push is synchronous, so a full spool's error reaches
// whoever called ConsumeLogs (the receiver turns it into a 503). Here the
// endpoint refuses us (401), which sends the lines to the spool without
// retries, and the spool has no room. With the queue enabled the same
// failure stays inside the collector: ConsumeLogs returns nil and only the
// metric and the log tell.
func TestDefaultsReturnFullSpoolToCaller(t *testing.T) {
	for _, queue := range []bool{false, true} {
		t.Run(fmt.Sprintf("sending_queue=%v", queue), func(t *testing.T) {
			rec := newRecorder(t, func(int) int { return http.StatusUnauthorized })
			dir := t.TempDir()
			cfg := createDefaultConfig().(*Config)
			if queue {
				cfg.QueueConfig.GetOrInsertDefault()
			}
			withFile(cfg, filepath.Join(dir, "events.jsonl"), auditevent.PolicyOverride{})
			hc := withHTTP(cfg, rec.srv.URL, "ndjson", auditevent.PolicyOverride{})
			sc := hc.Spool.GetOrInsertDefault()
			sc.Path = filepath.Join(dir, "spool.jsonl")
			sc.MaxSize = 100 // smaller than one canonical line
			core, logs := observer.New(zapcore.InfoLevel)
			te := startExportersWithLogger(t, cfg, zap.New(core))

			err := te.logs.ConsumeLogs(context.Background(), buildAuditLogs())

			if queue {
				require.NoError(t, err, "the queue takes the batch and keeps the error to itself")
				// Wait for the queue's push to end, not for the HTTP leg's
				// spool_full count: the file leg runs beside the HTTP leg
				// and may still be writing when that count appears. The
				// queue logs the push's error only once both legs are done.
				const dropMsg = "Exporting failed. Dropping data."
				require.Eventually(t, func() bool { return logs.FilterMessageSnippet(dropMsg).Len() > 0 },
					10*time.Second, 10*time.Millisecond)
				pushFailed := logs.FilterMessageSnippet(dropMsg)
				require.Equal(t, 1, pushFailed.Len())
				assert.Contains(t, pushFailed.All()[0].ContextMap()["error"], "spool is full")
				assert.Equal(t, int64(2), te.counter(t, "otelcol_sandboxaudit_exporter_events_dropped", "reason", "spool_full"))
			} else {
				require.Error(t, err)
				assert.ErrorContains(t, err, "spool is full")
				assert.False(t, consumererror.IsPermanent(err), "the caller may retry once the spool drains")
				assert.Equal(t, int64(2), te.counter(t, "otelcol_sandboxaudit_exporter_events_dropped", "reason", "spool_full"))
			}
			assert.Len(t, rec.snapshot(), 1, "a 401 is not retried")
			assert.Len(t, readLines(t, filepath.Join(dir, "events.jsonl")), 2, "the file sink has the batch")
			assert.Empty(t, readLines(t, sc.Path))
			assert.Equal(t, 1, logs.FilterLevelExact(zapcore.ErrorLevel).FilterField(zap.Int("status", 401)).Len())
			assert.Zero(t, te.counter(t, "otelcol_sandboxaudit_exporter_events_dropped", "reason", "http_4xx"))
		})
	}
}

// TestHTTPEndpointRefusalSpoolsAndReplays: an endpoint that refuses us
// (403) does not lose events: they are spooled and delivered, in order,
// once it accepts them again.
func TestHTTPEndpointRefusalSpoolsAndReplays(t *testing.T) {
	var allowed atomic.Bool
	rec := newRecorder(t, func(int) int {
		if allowed.Load() {
			return http.StatusOK
		}
		return http.StatusForbidden
	})
	cfg := syncConfig()
	hc := withHTTP(cfg, rec.srv.URL, "ndjson", auditevent.PolicyOverride{})
	sc := hc.Spool.GetOrInsertDefault()
	sc.Path = filepath.Join(t.TempDir(), "spool.jsonl")
	sc.ReplayInterval = 20 * time.Millisecond
	te := startExporters(t, cfg)

	require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))
	assert.Equal(t, int64(6), te.counter(t, "otelcol_sandboxaudit_exporter_events_spooled", "", ""))
	require.Eventually(t, func() bool { return len(rec.snapshot()) >= 3 }, 10*time.Second, 5*time.Millisecond,
		"the replayer keeps knocking")
	assert.Zero(t, te.counter(t, "otelcol_sandboxaudit_exporter_events_dropped", "", ""))

	allowed.Store(true)
	require.Eventually(t, func() bool {
		return te.counter(t, "otelcol_sandboxaudit_exporter_events_replayed", "", "") == 6
	}, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, strings.Join(expectedDefault(t), ""), rec.acceptedBodies())
	assert.Zero(t, te.counter(t, "otelcol_sandboxaudit_exporter_events_dropped", "", ""))
}
