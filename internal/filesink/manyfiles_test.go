package filesink

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMaintenanceListsADirectoryOncePerRound: a {session_id} path puts
// many audit files in one directory, each rotating; the maintainer looks
// after all the files queued at once with one listing of the directory,
// for compression and retention (kept torn lines included), not with a
// few listings per file, which made a round quadratic in the files.
func TestMaintenanceListsADirectoryOncePerRound(t *testing.T) {
	const files = 30
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var paths []string
	for f := range files {
		path := filepath.Join(dir, fmt.Sprintf("s%02d.jsonl", f))
		require.NoError(t, os.WriteFile(path, numberedLines(0, 0), 0o600))
		for i := 1; i <= 3; i++ {
			seg := namerFor(path).name(t0.Add(time.Duration(i)*time.Hour), int64(i))
			require.NoError(t, os.WriteFile(seg, numberedLines(i, i), 0o600))
		}
		keepTorn(t, namerFor(path).name(t0.Add(time.Hour), 1), t0.Add(time.Hour))
		paths = append(paths, path)
	}
	var ev rotationEvents
	r := ev.hook(&Rotation{Compress: true, MaxBackups: 1})
	r.now = func() time.Time { return t0.Add(48 * time.Hour) }
	listed := 0
	ctx, cancel := context.WithCancel(context.Background())
	m := &maintainer{rot: r, marks: newOwnMarks(), readDir: countingReadDir(&listed),
		queued: map[string]bool{}, wake: make(chan struct{}, 1), ctx: ctx, cancel: cancel, done: make(chan struct{})}
	for _, p := range paths {
		m.schedule(p) // all queued before the loop looks
	}
	go m.loop()
	require.Eventually(t, func() bool { return maintained(paths) }, time.Minute, 10*time.Millisecond)
	m.stop()

	require.Empty(t, ev.errors())
	require.Len(t, ev.removed, 2*files)
	require.Equal(t, 1, listed, "one listing of the directory for the round")
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 2*files, "each file and its newest segment, compressed; no torn line left")
}

// maintained reports whether each path has one closed segment left, and
// that compressed.
func maintained(paths []string) bool {
	for _, p := range paths {
		segs, err := Segments(p)
		if err != nil || len(segs) != 1 || !segs[0].Compressed {
			return false
		}
		if _, err := os.Lstat(segs[0].Plain); err == nil {
			return false
		}
	}
	return true
}

// TestOwnMarksKeepOnlyOpenFiles: the newest own segment remembered per
// path (for a clock set back) is kept while the sink holds the file open;
// a {session_id} path's sessions come and go by the million over a
// collector's life, and a mark per session ever seen grew without end. A
// path opened again is looked after as at a start.
func TestOwnMarksKeepOnlyOpenFiles(t *testing.T) {
	dir := t.TempDir()
	var ev rotationEvents
	r := ev.hook(&Rotation{MaxBytes: 1})
	s, err := New(Options{Path: filepath.Join(dir, "{session_id}.jsonl"), MaxOpenFiles: 4, Rotation: r})
	require.NoError(t, err)
	ctx := context.Background()
	for i := range 40 {
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		for b := range 2 {
			require.NoError(t, s.WriteBatch(ctx, id, numberedLines(b, b)))
		}
	}
	s.maint.stop()
	s.mu.Lock()
	open := len(s.files)
	var stray []string
	for path := range s.marks.newest {
		if s.files[path] == nil {
			stray = append(stray, path)
		}
	}
	s.mu.Unlock()
	require.Empty(t, stray, "marks for files no longer open")
	require.LessOrEqual(t, open, 4)
	require.Len(t, ev.rotated, 40)
	require.NoError(t, s.Close())
	require.Empty(t, s.marks.newest)
	require.Empty(t, ev.errors())
}
