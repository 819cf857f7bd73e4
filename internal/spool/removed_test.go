package spool

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestRemovedFileIsWrittenAgain: the spool file is removed while the
// collector runs (an operator, a tmp cleaner). The lines appended next must
// not go to the removed file, which a crash would take with them: the
// spool writes its pending lines to a new file at its path, and a restart
// replays every one of them.
func TestRemovedFileIsWrittenAgain(t *testing.T) {
	for name, replayFirst := range map[string]bool{"found by an append": false, "found by a replay round": true} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spool.jsonl")
			s, d := checkedSpool(t, path)
			first, second := eventLines(t, 1, 3), eventLines(t, 4, 5)
			require.NoError(t, s.Append(context.Background(), first))
			require.NoError(t, os.Remove(path))
			if replayFirst {
				_, err := s.Replay(context.Background(), 10, 1<<20, func(context.Context, []byte, int) error { return errors.New("endpoint down") })
				require.Error(t, err)
			}
			require.NoError(t, s.Append(context.Background(), second))
			require.Contains(t, d.kinds(), DamageRemoved)

			got, err := os.ReadFile(path)
			require.NoError(t, err, "the spool is at its path again")
			require.Equal(t, string(first)+string(second), string(got))
			fi, err := os.Stat(path)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

			// A crash: the next run replays every pending line from the path.
			require.NoError(t, s.Close())
			again := openSpool(t, Options{Path: path, Check: CanonicalEvent})
			var sent []byte
			_, err = again.Replay(context.Background(), 10, 1<<20, func(_ context.Context, b []byte, _ int) error {
				sent = append(sent, b...)
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, string(first)+string(second), string(sent))
		})
	}
}

// TestReplacedFileRefusesAppends: the spool's path names something else
// now (a directory). An append must fail rather than be acknowledged into
// a file no restart can find.
func TestReplacedFileRefusesAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	s, _ := checkedSpool(t, path)
	require.NoError(t, s.Append(context.Background(), eventLines(t, 1, 1)))
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Mkdir(path, 0o700))
	err := s.Append(context.Background(), eventLines(t, 2, 2))
	require.ErrorContains(t, err, "no longer names the spool's file")
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	require.True(t, fi.IsDir(), "what took the path is left alone")
}

// TestReplacedFileStillReplays: while the spool's path names something
// else, replay still sends the open file's lines, which no restart could
// find, and Upkeep says why the spool cannot be maintained. Once the path
// is free again, the spool is at its path again.
func TestReplacedFileStillReplays(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	s, _ := checkedSpool(t, path)
	lines := eventLines(t, 1, 2)
	require.NoError(t, s.Append(context.Background(), lines))
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Mkdir(path, 0o700))
	var sent []byte
	send := func(_ context.Context, b []byte, _ int) error {
		sent = append(sent, b...)
		return nil
	}
	n, err := s.Replay(context.Background(), 10, 1<<20, send)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, string(lines), string(sent))
	require.ErrorContains(t, s.Upkeep(), "no longer names the spool's file")

	require.NoError(t, os.Remove(path))
	_, err = s.Replay(context.Background(), 10, 1<<20, send)
	require.NoError(t, err)
	require.NoError(t, s.Upkeep())
	more := eventLines(t, 3, 3)
	require.NoError(t, s.Append(context.Background(), more))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(more), string(got))
}

// TestRemovedWhileAppendingAndReplaying: the file is removed again and
// again while appends and replay rounds run, then the spool stops as in a
// crash. Every append that returned nil is delivered, before the stop or
// by the next run; an append refused meanwhile was never acknowledged.
func TestRemovedWhileAppendingAndReplaying(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	s, _ := checkedSpool(t, path)
	ctx := context.Background()
	var mu sync.Mutex
	delivered := map[string]bool{}
	send := func(_ context.Context, b []byte, _ int) error {
		mu.Lock()
		defer mu.Unlock()
		for _, ln := range bytes.SplitAfter(b, []byte{'\n'}) {
			if len(ln) > 0 {
				delivered[string(ln)] = true
			}
		}
		return nil
	}
	var acked [][]byte
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	cleaned := make(chan struct{})
	go func() { // replay rounds
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, _ = s.Replay(ctx, 7, 1<<20, send)
		}
	}()
	go func() { // the cleaner
		defer wg.Done()
		defer close(cleaned)
		for range 30 {
			_ = os.Remove(path)
			time.Sleep(time.Millisecond)
		}
	}()
	for i := 1; i <= 300; i++ {
		line := eventLines(t, i, i)
		if s.Append(ctx, line) == nil {
			acked = append(acked, line)
		}
	}
	// On a busy machine every append can fall in a removal; once the
	// cleaner is done, the next replay round puts the file back.
	<-cleaned
	for i := 301; i <= 1300 && len(acked) < 10; i++ {
		line := eventLines(t, i, i)
		if s.Append(ctx, line) == nil {
			acked = append(acked, line)
		} else {
			time.Sleep(time.Millisecond)
		}
	}
	close(stop)
	wg.Wait()
	// A crash now: what was not delivered yet must be in the file at the
	// path, for the next run.
	require.NoError(t, s.Close())
	again := openSpool(t, Options{Path: path, Check: CanonicalEvent})
	_, err := again.Replay(ctx, 7, 1<<20, send)
	require.NoError(t, err)
	require.NotEmpty(t, acked)
	for _, line := range acked {
		require.True(t, delivered[string(line)], "an acknowledged line is delivered: %.60s", line)
	}
}

// TestUnreadablePathKeepsTheOpenFile: when the spool's directory cannot be
// searched (mode 000 for a collector that is not root), the spool cannot
// tell whether its path still names its file. It goes on with the open
// file: appends are taken and replay delivers them.
func TestUnreadablePathKeepsTheOpenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	s, d := checkedSpool(t, path)
	s.lstatFn = func(string) (os.FileInfo, error) { return nil, unix.EACCES }
	lines := eventLines(t, 1, 2)
	require.NoError(t, s.Append(context.Background(), lines))
	var sent []byte
	_, err := s.Replay(context.Background(), 10, 1<<20, func(_ context.Context, b []byte, _ int) error {
		sent = append(sent, b...)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, string(lines), string(sent))
	require.NotContains(t, d.kinds(), DamageRemoved)
}
