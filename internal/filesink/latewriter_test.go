package filesink

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// TestLateWriterAfterQuietFileKeepsItsLine: a writer that opened the path
// just before a rotation, and gets the lock after it, appends to the closed
// segment. The file had been quiet for an hour, yet the segment's grace
// counts from the rotation: compression waits, and the line is kept. The
// maintainer's round after the rotation is held until a second one is
// queued, so the writer writes only once that round has decided.
func TestLateWriterAfterQuietFileKeepsItsLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	var ev rotationEvents
	r := ev.hook(&Rotation{MaxBytes: 1 << 10, Compress: true})
	r.grace = time.Minute // no load stretches the writer's wait this far
	var rotated atomic.Bool
	onRotate := r.OnRotate
	r.OnRotate = func(p, seg string) { onRotate(p, seg); rotated.Store(true) }
	listed, release := make(chan struct{}, 2), make(chan struct{})
	var after atomic.Int32
	r.maintReadDir = func(dir string) ([]os.DirEntry, error) {
		if rotated.Load() {
			if after.Add(1) == 1 {
				listed <- struct{}{}
				<-release
			} else {
				listed <- struct{}{}
			}
		}
		return readDirUnsorted(dir)
	}
	s, err := New(Options{Path: path, Fsync: FsyncNever, Rotation: r})
	require.NoError(t, err)
	ctx := context.Background()
	first := numberedLines(0, 29) // about 2 KB
	require.NoError(t, s.WriteBatch(ctx, testSession, first))
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(path, old, old))
	late, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	defer func() { _ = late.Close() }()

	require.NoError(t, s.WriteBatch(ctx, testSession, numberedLines(30, 30))) // rotates
	waitListed(t, listed)
	s.maint.schedule(path) // a second round: it lists once the first is done
	close(release)
	waitListed(t, listed)

	require.NoError(t, fsutil.Lock(ctx, int(late.Fd())))
	_, err = late.WriteString("{\"late\":1}\n")
	require.NoError(t, err)
	fsutil.Unlock(int(late.Fd()))
	require.NoError(t, late.Close())
	require.NoError(t, s.Close())
	require.Empty(t, ev.errors())

	_, parts := readTrail(t, path)
	require.Equal(t, string(first)+"{\"late\":1}\n"+string(numberedLines(30, 30)), string(bytes.Join(parts, nil)))
}

func waitListed(t *testing.T, listed <-chan struct{}) {
	t.Helper()
	select {
	case <-listed:
	case <-time.After(time.Minute):
		t.Fatal("the maintainer never listed the directory after the rotation")
	}
}
