package sandboxauditexporter

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/exporter/internal/metadata"
	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/immutable"
)

const segmentErrors = "otelcol_sandboxaudit_exporter_segment_errors"

// TestAStoppedRetentionIsCountedEachRoundAndRemindedInTheLog: the
// rotation's hooks for a retention stopped at a segment it cannot remove.
// Each round stopped again counts in segment_errors without a log line;
// the hourly summary is an ERROR naming how many paths, segments and
// rounds, and the path stopped longest; a path that runs again is an INFO.
func TestAStoppedRetentionIsCountedEachRoundAndRemindedInTheLog(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	tb, err := metadata.NewTelemetryBuilder(tel.NewTelemetrySettings())
	require.NoError(t, err)
	core, logs := observer.New(zapcore.InfoLevel)
	e := &auditExporter{telemetry: newTelemetry(tb, component.MustNewID("sandboxaudit")), logger: zap.New(core)}
	r := e.rotation(&FileConfig{Rotation: configoptional.Some(RotationConfig{MaxBackups: 1})})
	count := func() int64 {
		m, err := tel.GetMetric(segmentErrors)
		require.NoError(t, err)
		return sumPoints(m, "", "")
	}

	cause := errors.New("retention: remove a/events-1.jsonl: operation not permitted")
	r.OnError("a/events.jsonl", cause)
	for range 3 {
		r.OnStillStopped("a/events.jsonl")
	}
	require.Equal(t, int64(4), count(), "each round stopped counts")
	require.Equal(t, 1, logs.Len(), "the failure is logged once")

	since := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	r.OnRetentionStuck(filesink.RetentionStuck{Paths: 3, Due: 7, Rounds: 5, Longest: filesink.StoppedRetention{
		Path: "a/events.jsonl", Segment: "a/events-1.jsonl", Err: cause, Since: since, Rounds: 6, Due: 3,
	}})
	stuck := logs.FilterMessageSnippet("Retention is still stopped").All()
	require.Len(t, stuck, 1)
	assert.Equal(t, zapcore.ErrorLevel, stuck[0].Level)
	fields := stuck[0].ContextMap()
	assert.EqualValues(t, 3, fields["paths"])
	assert.EqualValues(t, 7, fields["segments_due"])
	assert.EqualValues(t, 5, fields["stopped_rounds"])
	assert.Equal(t, "a/events.jsonl", fields["path"])
	assert.Equal(t, "a/events-1.jsonl", fields["segment"])
	assert.Equal(t, since, fields["stopped_since"])
	assert.Equal(t, cause.Error(), fields["error"])
	require.Equal(t, int64(4), count(), "the summary is not a failure of its own")

	r.OnRetentionResumed(filesink.StoppedRetention{Path: "a/events.jsonl", Since: since, Rounds: 9})
	runs := logs.FilterMessageSnippet("Retention runs again").All()
	require.Len(t, runs, 1)
	assert.Equal(t, zapcore.InfoLevel, runs[0].Level)
	assert.Equal(t, "a/events.jsonl", runs[0].ContextMap()["path"])
	assert.EqualValues(t, 9, runs[0].ContextMap()["stopped_rounds"])
}

// TestAnImmutableSegmentKeepsCountingWhileLoggedOnce: an old segment made
// immutable (chattr +i) stops retention. The collector logs it once, and
// each later round (here the next rotation's) still counts in
// segment_errors, so an alert on its increase keeps firing while the disk may fill.
func TestAnImmutableSegmentKeepsCountingWhileLoggedOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	old := filepath.Join(dir, "events-20260101T000000Z-000001.jsonl")
	require.NoError(t, os.WriteFile(old, []byte("{\"n\":1}\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "events-20260102T000000Z-000002.jsonl"), []byte("{\"n\":2}\n"), 0o600))
	if _, ok := immutable.Set(t, old); !ok {
		t.Skip("this process may not make a file immutable (root with CAP_LINUX_IMMUTABLE on Linux)")
	}
	fillPastAMegabyte(t, path)

	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	cfg.File.Get().Rotation = configoptional.Some(RotationConfig{MaxMegabytes: 1, MaxBackups: 1})
	core, logs := observer.New(zapcore.InfoLevel)
	te := startExportersWithLogger(t, cfg, zap.New(core))
	failed := func() []observer.LoggedEntry {
		return logs.FilterMessageSnippet("Rotation, compression or retention step failed").All()
	}

	require.NoError(t, te.logs.ConsumeLogs(context.Background(), buildAuditLogs()))
	require.Eventually(t, func() bool { return len(failed()) > 0 }, time.Minute, 5*time.Millisecond)
	require.Contains(t, failed()[0].ContextMap()["error"], old)

	require.Eventually(t, func() bool { return logs.FilterMessageSnippet("Audit file rotated").Len() == 1 }, time.Minute, 5*time.Millisecond)
	first := te.counter(t, segmentErrors, "", "")

	fillPastAMegabyte(t, path) // as another writer of the path would
	require.NoError(t, te.logs.ConsumeLogs(context.Background(), writeStartLog()))
	require.Eventually(t, func() bool { return logs.FilterMessageSnippet("Audit file rotated").Len() == 2 }, time.Minute, 5*time.Millisecond)
	require.Eventually(t, func() bool { return te.counter(t, segmentErrors, "", "") > first }, time.Minute, 5*time.Millisecond,
		"the round after the next rotation stops again, and counts")
	require.Len(t, failed(), 1, "and is not logged again")
	require.FileExists(t, old)
}

// fillPastAMegabyte appends a megabyte of lines to path, so that the next
// batch rotates it.
func fillPastAMegabyte(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString(strings.Repeat("{\"pad\":\""+strings.Repeat("x", 1<<10)+"\"}\n", 1<<10))
	require.NoError(t, errors.Join(err, f.Close()))
}

// writeStartLog is a log record of a write's start event, another event
// than buildAuditLogs's.
func writeStartLog() plog.Logs {
	ld := plog.NewLogs()
	r := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	r.SetEventName("sandbox.session.start")
	r.Body().SetStr(writeStartJSON(`{"path":"/w/a.txt"}`))
	return ld
}
