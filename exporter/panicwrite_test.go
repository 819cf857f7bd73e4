package sandboxauditexporter

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// A sink write that panics (the panic recovered upstream, as net/http
// does per request) lets its batch's start ids go: the client's resend
// writes them, rather than being answered as a duplicate of lines never
// written or waiting on a write that never ends.
func TestPanickingWriteLetsItsIDsGo(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	e, err := newAuditExporter(cfg, exportertestSettings(), newFileClaims())
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, e.Start(ctx, nopHost()))
	t.Cleanup(func() { require.NoError(t, e.Shutdown(context.Background())) })

	// BeforeCreate runs inside WriteBatch, before any line is written.
	good := e.file.sink
	panicking, err := filesink.New(filesink.Options{
		Path:         filepath.Join(dir, "other.jsonl"),
		BeforeCreate: func(context.Context, string) error { panic("the sink panicked") },
	})
	require.NoError(t, err)
	e.file.sink = panicking
	require.PanicsWithValue(t, "the sink panicked", func() { _ = e.pushLogs(ctx, earlyExecStart()) })
	e.file.sink = good

	// Bounded: a flight left behind would hold the resend until ctx ends.
	resend, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, e.pushLogs(resend, earlyExecStart()))
	require.Equal(t, []string{canonical(t, execStartJSON())}, readLines(t, path))
}
