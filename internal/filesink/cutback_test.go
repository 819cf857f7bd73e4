package filesink

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// TestFileCutBackUnderTheSinkIsReported: a file cut back below the lines
// the sink appended, while it stays at the path, lost acknowledged lines:
// OnCutBack is told where the sink's last append ended and where the file
// ends now, once, and the next batch goes on at the new end, after the
// torn line the cut left is taken off.
func TestFileCutBackUnderTheSinkIsReported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	var mu sync.Mutex
	var cuts [][2]int64
	var sites []TornSite
	s, err := New(Options{Path: path, OnCutBack: func(p string, from, to int64) {
		require.Equal(t, path, p)
		mu.Lock()
		cuts = append(cuts, [2]int64{from, to})
		mu.Unlock()
	}, OnTornTail: func(_ string, _ fsutil.TornTail, site TornSite) {
		mu.Lock()
		sites = append(sites, site)
		mu.Unlock()
	}})
	require.NoError(t, err)
	ctx := context.Background()
	first, second := numberedLines(0, 4), numberedLines(5, 5)
	require.NoError(t, s.WriteBatch(ctx, testSession, first))
	written := int64(len(first))
	cutTo := written - int64(len(second))/2 // inside the last line
	require.NoError(t, os.Truncate(path, cutTo))
	require.NoError(t, s.WriteBatch(ctx, testSession, second))
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(6, 6)))
	require.NoError(t, s.Close())
	require.Equal(t, [][2]int64{{written, cutTo}}, cuts, "told once")
	require.Equal(t, []TornSite{TornAfterCutBack}, sites, "the torn line is the cut's, not a killed writer's")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	lastWhole := int64(len(numberedLines(0, 3)))
	require.Equal(t, string(first[:lastWhole])+string(second)+string(numberedLines(6, 6)), string(got),
		"the torn line the cut left is taken off")
}

// TestAFileGrowingUnderTheSinkIsNoCut: other writers' lines after the
// sink's (a Python writer, a second collector) are not a cut.
func TestAFileGrowingUnderTheSinkIsNoCut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	called := false
	s, err := New(Options{Path: path, OnCutBack: func(string, int64, int64) { called = true }})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(0, 1)))
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write(numberedLines(2, 2))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(3, 3)))
	require.NoError(t, s.Close())
	require.False(t, called)
}

// TestATornLineAfterAnIdleCutIsAKilledWriters: a cut the interval's
// rotation finds goes with the file to its segment, and a cut to nothing
// leaves no torn line: a torn line the next write finds at the path is a
// killed writer's, not the cut's.
func TestATornLineAfterAnIdleCutIsAKilledWriters(t *testing.T) {
	for name, cut := range map[string]struct {
		to       func(written int64) int64
		segments int
	}{
		"inside the last line, rotated": {func(w int64) int64 { return w - 5 }, 1},
		"to nothing, not rotated":       {func(int64) int64 { return 0 }, 0},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "events.jsonl")
			sites := tornSitesAfterIdleCut(t, path, cut.to)
			segs, err := Segments(path)
			require.NoError(t, err)
			require.Len(t, segs, cut.segments)
			require.Equal(t, []TornSite{TornInAuditFile}, sites, "the torn line is a killed writer's")
		})
	}
}

// tornSitesAfterIdleCut writes lines to path, cuts the file back to
// cutTo(written), lets the interval's rotation look at it, leaves a killed
// writer's torn line, writes again, and returns the torn lines' sites.
func tornSitesAfterIdleCut(t *testing.T, path string, cutTo func(written int64) int64) []TornSite {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)}
	var ev rotationEvents
	r := ev.hook(&Rotation{Interval: time.Hour})
	clock.drive(r)
	var mu sync.Mutex
	var sites []TornSite
	s, err := New(Options{Path: path, Rotation: r, OnTornTail: func(_ string, _ fsutil.TornTail, site TornSite) {
		mu.Lock()
		sites = append(sites, site)
		mu.Unlock()
	}})
	require.NoError(t, err)
	ctx := context.Background()
	first := numberedLines(0, 4)
	require.NoError(t, s.WriteBatch(ctx, testSession, first))
	require.NoError(t, os.Truncate(path, cutTo(int64(len(first)))))
	clock.add(time.Hour)
	rotateDue(ctx, s, path)

	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"data":{"cut short`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(5, 5)))
	require.NoError(t, s.Close())
	mu.Lock()
	defer mu.Unlock()
	return sites
}
