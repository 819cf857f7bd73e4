package sandboxtrace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"time"

	"github.com/sandboxaudit/sandboxaudit/internal/plural"
)

// Span exports that got no reply go again after a pause that starts at
// firstRetryPause and doubles up to maxRetryPause: a collector restarting
// on the same host is back within a second or two, and a refused dial
// costs next to nothing.
const (
	firstRetryPause = 100 * time.Millisecond
	maxRetryPause   = 2 * time.Second
	// maxRetryTime bounds the retries of an export whose ctx has no
	// deadline (sdktrace.WithExportTimeout(0)): the SDK's default export
	// timeout.
	maxRetryTime = 30 * time.Second
)

// retryUntil is when the retries of an export bounded by ctx end: its
// deadline, else retryFor (0: maxRetryTime) from now.
func retryUntil(ctx context.Context, retryFor time.Duration) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	if retryFor <= 0 {
		retryFor = maxRetryTime
	}
	return time.Now().Add(retryFor)
}

// exportRetrying calls export, and again while it fails in transport
// (unreachableError) and there is time for the next pause before giveUp
// (retryUntil) and ctx ends. A reply is never sent again as it was: the
// exporter already retried what its protocol calls retryable, and a
// refusal goes again in halves (halving). The items stay the caller's;
// nothing is copied.
func exportRetrying(ctx context.Context, giveUp time.Time, export func(context.Context) error) error {
	pause := firstRetryPause
	for attempt := 1; ; attempt++ {
		err := export(ctx)
		if err == nil || !unreachableError(err) {
			return err
		}
		wait := pause/2 + rand.N(pause/2+1) // spread, so clients do not return in step
		if time.Until(giveUp) < wait || !sleep(ctx, wait) {
			return fmt.Errorf("%s: %w", plural.Count(attempt, "attempt"), err)
		}
		pause = min(2*pause, maxRetryPause)
	}
}

// unreachableError reports whether err says the request got no reply: a
// dial refused or unreachable, a connection reset, or closed before the
// reply was read. otlptracehttp returns these as permanent; only 429, 502,
// 503, 504 and timeouts are retried there. A TLS alert is a refusal, not
// an outage.
func unreachableError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Op != "remote error" && op.Op != "local error"
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// sleep waits d, and reports false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
