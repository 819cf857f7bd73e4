package spool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const helperEnv = "SPOOL_CRASH_HELPER_PATH"

// TestHelperProcess is the child of TestCrashMidAppend: it appends numbered
// lines to the spool forever while replaying them into a "delivered" file,
// until it is killed. It gives up by itself after two minutes so an
// orphaned child cannot linger.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("helper process for TestCrashMidAppend")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// A small compaction threshold so rewrites happen while being killed.
	s, err := Open(ctx, Options{Path: path, CompactBytes: 16 << 10})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	delivered, err := os.OpenFile(path+".delivered", os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	progress, err := os.OpenFile(path+".appended", os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	go func() {
		for ctx.Err() == nil {
			_, _ = s.Replay(ctx, 200, 256<<10, func(_ context.Context, b []byte, _ int) error {
				_, err := delivered.Write(b)
				return err
			})
			time.Sleep(time.Millisecond)
		}
	}()
	var batch bytes.Buffer
	for n := 0; ctx.Err() == nil; {
		batch.Reset()
		k := 1 + n%37 // up to ~9 KiB: more than a page, so SIGKILL can tear it
		for range k {
			fmt.Fprintf(&batch, "{\"n\":%d,\"pad\":%q}\n", n, strings.Repeat("c", 100+n%200))
			n++
		}
		if err := s.Append(ctx, batch.Bytes()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		// Record the last line Append acknowledged (fixed width, in place).
		if _, err := progress.WriteAt([]byte(fmt.Sprintf("%20d", n-1)), 0); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	os.Exit(3)
}

type numbered struct {
	N   *int   `json:"n"`
	Pad string `json:"pad"`
}

func parseNumbered(line []byte) (int, error) {
	var v numbered
	if err := json.Unmarshal(line, &v); err != nil {
		return 0, err
	}
	if v.N == nil || len(v.Pad) < 100 {
		return 0, fmt.Errorf("incomplete record %.80q", line)
	}
	return *v.N, nil
}

func readProgress(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}

func TestCrashMidAppend(t *testing.T) {
	rounds := 3
	if testing.Short() {
		rounds = 1
	}
	for round := range rounds {
		t.Run(fmt.Sprintf("round%d", round), func(t *testing.T) {
			crashRound(t, 10_000*(round+1))
		})
	}
}

func crashRound(t *testing.T, killAfter int) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())

	require.Eventually(t, func() bool {
		return readProgress(path+".appended") >= killAfter || cmd.ProcessState != nil
	}, 60*time.Second, 5*time.Millisecond, "child made no progress: %s", &out)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	err := cmd.Wait()
	require.Error(t, err)
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	require.True(t, ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL, "child ended otherwise: %v\n%s", err, &out)
	appended := readProgress(path + ".appended")

	// Lines the child delivered before it died: contiguous from 0. A write
	// cut by the kill leaves a torn last line, whose batch was never
	// acknowledged.
	raw, err := os.ReadFile(path + ".delivered")
	require.NoError(t, err)
	deliveredN := 0
	if i := bytes.LastIndexByte(raw, '\n'); i >= 0 {
		for line := range bytes.Lines(raw[:i+1]) {
			n, err := parseNumbered(line)
			require.NoError(t, err)
			require.Equal(t, deliveredN, n, "delivered lines out of order")
			deliveredN++
		}
	}

	s, err := Open(ctx, Options{Path: path})
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	rec := s.Recovery()
	t.Logf("killed after %d appended lines, %d delivered; recovery %+v", appended+1, deliveredN, rec)

	first, next := -1, -1
	sent, err := s.Replay(ctx, 1000, 1<<20, func(_ context.Context, b []byte, _ int) error {
		for line := range bytes.Lines(b) {
			n, err := parseNumbered(line)
			if err != nil {
				return fmt.Errorf("replayed a broken line: %w", err)
			}
			if first < 0 {
				first, next = n, n
			}
			if n != next {
				return fmt.Errorf("replayed %d, want %d", n, next)
			}
			next++
		}
		return nil
	})
	require.NoError(t, err)
	if sent == 0 {
		require.GreaterOrEqual(t, deliveredN-1, appended, "acknowledged appends were lost")
		return
	}
	require.LessOrEqual(t, first, deliveredN, "a gap between delivered and replayed lines")
	require.LessOrEqual(t, deliveredN-first, 200, "more than one batch resent")
	require.GreaterOrEqual(t, next-1, appended, "acknowledged appends were lost")
	if rec.TornBytes > 0 {
		torn, err := os.ReadFile(rec.TornPath)
		require.NoError(t, err)
		require.NotContains(t, string(torn), "\n", "only a partial line is cut")
	}
}

func TestReplayMemoryIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 100 MB spool")
	}
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	require.NoError(t, err)
	w := bufio.NewWriterSize(f, 1<<20)
	const target = 100 << 20
	written, lines := 0, 0
	for written < target {
		n, err := fmt.Fprintf(w, "{\"n\":%d,\"pad\":%q}\n", lines, strings.Repeat("m", 100+lines%300))
		require.NoError(t, err)
		written += n
		lines++
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())

	s := openSpool(t, Options{Path: path, Adopt: true})
	ctx := context.Background()
	runtime.GC()
	var before, now runtime.MemStats
	runtime.ReadMemStats(&before)
	var peakInuse uint64
	seen, batches := 0, 0
	sent, err := s.Replay(ctx, 2000, 512<<10, func(_ context.Context, b []byte, n int) error {
		// Check order without allocating: each line starts {"n":<seen>,
		for line := range bytes.Lines(b) {
			want := strconv.AppendInt([]byte(`{"n":`), int64(seen), 10)
			if !bytes.HasPrefix(line, want) || line[len(want)] != ',' {
				return fmt.Errorf("line %d: %.40q", seen, line)
			}
			seen++
		}
		batches++
		if batches%25 == 0 {
			runtime.ReadMemStats(&now)
			peakInuse = max(peakInuse, now.HeapInuse)
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, lines, sent)
	runtime.ReadMemStats(&now)
	peakInuse = max(peakInuse, now.HeapInuse)
	grew := int64(peakInuse) - int64(before.HeapInuse)
	allocated := now.TotalAlloc - before.TotalAlloc
	t.Logf("replayed %d lines (%d MB) in %d batches: heap in use grew %d KiB, %d KiB allocated in total",
		sent, written>>20, batches, grew>>10, allocated>>10)
	require.Less(t, grew, int64(8<<20), "live heap must not grow with the spool")
	require.Less(t, allocated, uint64(16<<20), "replay must stream, not load the file")
	require.Equal(t, int64(0), fileSize(t, path))
}
