package sandboxauditexporter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestTornTailIsCutAndLoggedWithoutItsBytes: an audit file left with a torn
// last line (a writer killed mid-write) has the line cut off and kept aside
// at the next write, the collector says so at WARN with where it is kept,
// and the line's bytes (an event's, maybe holding a secret) stay out of the
// log.
func TestTornTailIsCutAndLoggedWithoutItsBytes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	const torn = `{"data":{"stdout":"hunter2-secret`
	require.NoError(t, os.WriteFile(path, []byte(torn), 0o600))
	cfg := createDefaultConfig().(*Config)
	withFile(cfg, path, auditevent.PolicyOverride{})
	core, logs := observer.New(zapcore.InfoLevel)
	te := startExportersWithLogger(t, cfg, zap.New(core))

	require.NoError(t, te.logs.ConsumeLogs(context.Background(), buildAuditLogs()))

	got := readLines(t, path)
	require.NotEmpty(t, got)
	for _, l := range got {
		require.NotContains(t, l, "hunter2")
	}
	cut := logs.FilterMessageSnippet("Cut a torn last line").All()
	require.Len(t, cut, 1)
	assert.Contains(t, cut[0].Message, "off the audit file "+path+", before writing to it")
	fields := cut[0].ContextMap()
	assert.Equal(t, path, fields["path"])
	assert.Equal(t, int64(len(torn)), fields["bytes"])
	kept, _ := fields["kept_in"].(string)
	require.True(t, strings.HasPrefix(kept, path+".torn-"), kept)
	b, err := os.ReadFile(kept)
	require.NoError(t, err)
	assert.Equal(t, torn, string(b))
	for _, e := range logs.All() {
		assert.NotContains(t, e.Message, "hunter2")
		for k, v := range e.ContextMap() {
			assert.NotContains(t, fmt.Sprint(k, "=", v), "hunter2")
		}
	}
}

// TestTornTailOfASegmentIsLoggedAsTheSegments: compression cuts a closed
// segment's torn last line off before compressing it; the warning names
// that segment and that situation, not the audit file and a write.
func TestTornTailOfASegmentIsLoggedAsTheSegments(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	seg := filepath.Join(dir, "events-20260101T000000Z-000001.jsonl")
	const torn = `{"data":{"stdout":"hunter2-secret`
	require.NoError(t, os.WriteFile(seg, []byte("{\"n\":1}\n"+torn), 0o600))
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(seg, old, old))
	cfg := createDefaultConfig().(*Config)
	withFile(cfg, path, auditevent.PolicyOverride{})
	cfg.File.Get().Rotation = configoptional.Some(RotationConfig{MaxMegabytes: 100, Compression: "zstd"})
	core, logs := observer.New(zapcore.InfoLevel)
	te := startExportersWithLogger(t, cfg, zap.New(core))

	require.NoError(t, te.logs.ConsumeLogs(context.Background(), buildAuditLogs()))
	require.Eventually(t, func() bool { return logs.FilterMessageSnippet("Cut a torn last line").Len() > 0 },
		time.Minute, 5*time.Millisecond)
	cut := logs.FilterMessageSnippet("Cut a torn last line").All()
	require.Len(t, cut, 1)
	assert.Contains(t, cut[0].Message, "off the closed segment "+seg+", before compressing it")
	assert.NotContains(t, cut[0].Message, "audit file")
	assert.Equal(t, seg, cut[0].ContextMap()["path"])
	assert.NotContains(t, cut[0].Message, "hunter2")
}
