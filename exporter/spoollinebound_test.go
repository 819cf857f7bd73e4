package sandboxauditexporter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/spool"
)

// TestSpoolLineBoundFollowsMaxLineBytes: the exporter never spools a line
// longer than max_line_bytes, so a longer line found in the spool is
// damage, passed over without being read into memory; the bound is never
// below the default max_line_bytes, so lowering it does not quarantine
// lines spooled before. The events around the long line are delivered.
func TestSpoolLineBoundFollowsMaxLineBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	sp, err := spool.Open(context.Background(), spool.Options{Path: path})
	require.NoError(t, err)
	require.NoError(t, sp.Close())
	line := func(seq int) string {
		return canonical(t, fmt.Sprintf(`{"version":1,"event_id":"00000000-0000-4000-8000-%012d","ts":"2026-03-14T15:09:26.5Z",`+
			`"session_id":"00000000-0000-4000-8000-000000000001","seq":%d,"op":"read","phase":"start","span_id":"s%d",`+
			`"parent_span_id":null,"trace_id":null,"data":{"path":"/w"}}`, seq, seq, seq))
	}
	long := defaultMaxLineBytes + 1<<20
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(line(1) + strings.Repeat("a", long) + "\n" + line(2))
	require.NoError(t, errors.Join(err, f.Close()))

	rec := newRecorder(t, nil)
	cfg := syncConfig()
	cfg.MaxLineBytes = 64 << 10
	hc := withHTTP(cfg, rec.srv.URL+"/v1/sandbox/events", "ndjson", auditevent.PolicyOverride{})
	sc := hc.Spool.GetOrInsertDefault()
	sc.Path = path
	sc.ReplayInterval = 10 * time.Millisecond
	core, logs := observer.New(zapcore.InfoLevel)
	startExportersWithLogger(t, cfg, zap.New(core))

	for range 1000 {
		if strings.Count(rec.acceptedBodies(), "\n") >= 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.Equal(t, line(1)+line(2), rec.acceptedBodies())
	bad := logs.FilterMessageSnippet("spool line is not a valid audit event").All()
	require.Len(t, bad, 1)
	require.Equal(t, fmt.Sprintf("longer than %d bytes", defaultMaxLineBytes), bad[0].ContextMap()["problem"])
	require.False(t, bytes.Contains([]byte(rec.acceptedBodies()), []byte("aaaa")))
}
