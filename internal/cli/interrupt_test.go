package cli

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/syncbuf"
)

// readingPipe says when a command first reads it.
type readingPipe struct {
	*io.PipeReader
	once    sync.Once
	reading chan struct{}
}

func (r *readingPipe) Read(p []byte) (int, error) {
	r.once.Do(func() { close(r.reading) })
	return r.PipeReader.Read(p)
}

// A command blocked reading stdin (a terminal, a stalled pipe) cannot see
// the interrupt, and the process has taken SIGINT and SIGTERM over from
// their default: it still ends, once the grace has passed, with exit 1.
func TestInterruptEndsACommandBlockedOnStdin(t *testing.T) {
	for _, args := range [][]string{{"canon"}, {"verify", "-"}, {"show", "-"}, {"sessions", "-"}} {
		t.Run(args[0], func(t *testing.T) {
			pr, pw := io.Pipe()
			stdin := &readingPipe{PipeReader: pr, reading: make(chan struct{})}
			defer func() { _ = pw.Close() }() // lets the abandoned read go
			ctx, cancel := context.WithCancel(context.Background())
			stderr := &syncbuf.Buffer{} // the abandoned command may still write to it
			done := make(chan int, 1)
			go func() {
				done <- RunUntilInterrupted(ctx, args, Streams{Stdin: stdin, Stdout: io.Discard, Stderr: stderr}, time.Millisecond)
			}()
			<-stdin.reading
			cancel()
			select {
			case code := <-done:
				require.Equal(t, exitProblems, code)
				require.Contains(t, stderr.String(), "sandboxaudit: interrupted; "+args[0]+" did not stop")
			case <-time.After(time.Minute):
				t.Fatal("still running a minute after the interrupt")
			}
		})
	}
}

// A command that ends is not cut short: its own status is returned.
func TestRunUntilInterruptedReturnsTheCommandsStatus(t *testing.T) {
	stderr := &syncbuf.Buffer{}
	code := RunUntilInterrupted(context.Background(), []string{"canon"},
		Streams{Stdin: strings.NewReader("not json\n"), Stdout: io.Discard, Stderr: stderr}, time.Hour)
	require.Equal(t, exitProblems, code)
	require.Contains(t, stderr.String(), "canon: 1 bad line skipped")
}
