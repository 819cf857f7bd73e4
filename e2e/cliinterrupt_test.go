package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCLIInterruptEndsACommandWaitingOnStdin: the CLI takes SIGTERM over
// to cancel its commands, so one blocked reading a stdin that sends
// nothing (a stalled pipe, a terminal) must still end: once the grace has
// passed, with exit 1, saying so.
func TestCLIInterruptEndsACommandWaitingOnStdin(t *testing.T) {
	requireE2E(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer func() { _ = w.Close() }()
	cmd := exec.CommandContext(ctx, bins.cli, "canon")
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = r, &stderr
	require.NoError(t, cmd.Start())
	require.NoError(t, r.Close())

	// More than a pipe holds, with no newline: once it is all written,
	// canon has read from stdin, so its signal handling is in place, and
	// it waits for the rest of the line.
	_, err = w.Write(bytes.Repeat([]byte("x"), 1<<20))
	require.NoError(t, err)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))

	err = cmd.Wait()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "%v", err)
	require.Equal(t, 1, exit.ExitCode(), stderr.String())
	require.True(t, strings.Contains(stderr.String(), "sandboxaudit: interrupted; canon did not stop within"), stderr.String())
}
