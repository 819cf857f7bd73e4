package spool

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const tearHelperEnv = "SPOOL_TEAR_HELPER_PATH"

// tearAcked is how many lines the tear helper appends (and has
// acknowledged) before the large append it is killed in.
const tearAcked = 500

// TestTearHelperProcess is the child of TestKillMidAppendLeavesNoTornLine:
// it appends tearAcked lines, prints the spool size and then appends one
// batch large enough (64 MiB) that the parent, which kills it as soon as
// the file grows, lands its SIGKILL inside the write(2). Linux stops a buffered write between pages when a fatal signal
// is pending, so the file ends in a partial line.
func TestTearHelperProcess(t *testing.T) {
	path := os.Getenv(tearHelperEnv)
	if path == "" {
		t.Skip("helper process for TestKillMidAppendLeavesNoTornLine")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	s, err := Open(ctx, Options{Path: path})
	if err != nil {
		fail(err)
	}
	for n := 0; n < tearAcked; n += 10 {
		var b bytes.Buffer
		for i := n; i < n+10; i++ {
			fmt.Fprintf(&b, "{\"n\":%d,\"pad\":%q}\n", i, strings.Repeat("a", 100+i%50))
		}
		if err := s.Append(ctx, b.Bytes()); err != nil {
			fail(err)
		}
	}
	var big bytes.Buffer
	for i := tearAcked; big.Len() < 64<<20; i++ {
		fmt.Fprintf(&big, "{\"n\":%d,\"pad\":%q}\n", i, strings.Repeat("b", 100+i%300))
	}
	// The parent kills once the file grows past this size, i.e. inside
	// the write.
	if _, err := fmt.Printf("big %d\n", s.Size()); err != nil {
		fail(err)
	}
	if err := s.Append(ctx, big.Bytes()); err != nil {
		fail(err)
	}
	// Not killed in time: wait to be killed so the parent sees SIGKILL
	// either way, and can tell from the file that nothing was torn.
	<-ctx.Done()
	os.Exit(3)
}

// TestKillMidAppendLeavesNoTornLine kills a process inside a spool append
// (SIGKILL, no chance to clean up) and checks that reopening cuts the torn
// line off and keeps it aside, and that replay sends every acknowledged
// line and no broken one.
func TestKillMidAppendLeavesNoTornLine(t *testing.T) {
	// The kill can in principle miss the write; a few attempts make that
	// vanishingly unlikely, and at least one must tear.
	for attempt := range 3 {
		if killMidAppend(t, attempt) {
			return
		}
	}
	t.Fatal("no attempt killed the child inside its write; the torn-line path was not exercised")
}

func killMidAppend(t *testing.T, attempt int) (tore bool) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestTearHelperProcess$")
	cmd.Env = append(os.Environ(), tearHelperEnv+"="+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())

	before := int64(-1)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "big %d", &before); err == nil {
			break
		}
	}
	require.GreaterOrEqual(t, before, int64(0), "child never reached the large append: %s", &stderr)
	// Kill as soon as the write has begun; it takes milliseconds, polling
	// takes microseconds.
	deadline := time.Now().Add(30 * time.Second)
	for {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		if fi.Size() > before {
			break
		}
		require.True(t, time.Now().Before(deadline), "the large append never started: %s", &stderr)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	require.True(t, ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL, "child ended otherwise: %s", &stderr)

	s, err := Open(ctx, Options{Path: path})
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	rec := s.Recovery()
	t.Logf("attempt %d: recovery %+v", attempt, rec)

	next := 0
	_, err = s.Replay(ctx, 1000, 1<<20, func(_ context.Context, b []byte, _ int) error {
		for line := range bytes.Lines(b) {
			n, err := parseNumbered(line)
			if err != nil {
				return fmt.Errorf("replayed a broken line: %w", err)
			}
			if n != next {
				return fmt.Errorf("replayed %d, want %d", n, next)
			}
			next++
		}
		return nil
	})
	require.NoError(t, err)
	t.Logf("attempt %d: replayed %d lines", attempt, next)
	require.GreaterOrEqual(t, next, tearAcked, "acknowledged appends were lost")
	if rec.TornBytes == 0 {
		return false
	}
	torn, err := os.ReadFile(rec.TornPath)
	require.NoError(t, err)
	require.Len(t, torn, int(rec.TornBytes))
	require.NotContains(t, string(torn), "\n", "only the partial last line is cut")
	fi, err := os.Stat(rec.TornPath)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	return true
}
