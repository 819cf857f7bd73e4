package httpsink

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"

	"github.com/sandboxaudit/sandboxaudit/internal/spool"
)

// A spool adopted at start whose file as found cannot be kept (the
// .adopted- copies are at the spool's max size) is an ERROR, counted, and
// its lines are still delivered.
func TestAdoptedSpoolNotKeptIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	lines := makeLines(t, uuid.New(), 1, 5, 60)
	maxSize := int64(len(lines)) + 10
	// An earlier adoption's copy, already as large as the bound allows.
	require.NoError(t, os.WriteFile(path+".adopted-1", lines, 0o600))
	require.NoError(t, os.WriteFile(path, lines, 0o600)) // lines, no sidecar
	sp, err := spool.Open(context.Background(), spool.Options{Path: path, MaxSize: maxSize, Check: spool.CanonicalEvent, AdoptValid: true})
	require.NoError(t, err)
	f := newFixture(t, FormatNDJSON, false, func(s *Settings) { s.Spool = sp })
	f.spool, f.spoolPath = sp, path
	f.start(t)

	logged := f.logs.FilterMessageSnippet("could not be kept under a second name").All()
	require.Len(t, logged, 1)
	require.Equal(t, zapcore.ErrorLevel, logged[0].Level)
	require.Contains(t, logged[0].ContextMap()["not_kept"], "max size")
	require.Zero(t, f.logs.FilterMessageSnippet("is kept under a second name").Len(), "no WARN saying it is kept")
	require.Equal(t, 1, f.obs.stats().adoptedNotKept)

	waitReceived(t, f.srv, FormatNDJSON, 5, 30*time.Second)
	f.waitSpoolEmpty(t)
	copies, err := filepath.Glob(path + ".adopted-*")
	require.NoError(t, err)
	require.Equal(t, []string{path + ".adopted-1"}, copies)
}
