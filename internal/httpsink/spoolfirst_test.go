package httpsink

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configretry"
)

// hourRetry would hold a live retry for an hour: a Send that returns before
// its deadline did not back off live.
func hourRetry(s *Settings) {
	s.Retry = configretry.BackOffConfig{Enabled: true, InitialInterval: time.Hour, MaxInterval: time.Hour, Multiplier: 1.5}
}

// With a spool, a failed request is spooled at once: the caller (through
// the receiver, a client with its own deadline, such as a write-ahead
// start record in sync mode) is not held through the live backoff.
func TestWithSpoolAFailureIsSpooledWithoutLiveRetries(t *testing.T) {
	for _, mode := range []string{"refused", "503"} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t, FormatNDJSON, true, hourRetry)
			if mode == "refused" {
				f.srv.down()
			} else {
				f.srv.setDefault(status(503, nil, "maintenance"))
			}
			lines := makeLines(t, uuid.New(), 1, 3, 10)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()

			require.NoError(t, f.sink.Send(ctx, lines, 3))

			require.NoError(t, ctx.Err(), "Send sat in the live backoff")
			if mode == "503" {
				require.Len(t, f.srv.all(), 1, "one attempt, no live retry")
			}
			require.Equal(t, string(lines), string(spoolFileBytes(t, f.spoolPath)))
			require.Equal(t, 3, f.obs.stats().spooled)
			require.False(t, f.sink.isDown(), "one failure leaves the judgement to the replayer")
		})
	}
}

// One failed request is no outage: the replayer tries again at once, not
// after its pause, and the lines arrive once, in order.
func TestWithSpoolOneFailureIsReplayedAtOnce(t *testing.T) {
	f := newFixture(t, FormatNDJSON, true, hourRetry, func(s *Settings) { s.ReplayInterval = time.Hour })
	f.srv.then(status(503, nil, "blip"))
	f.start(t) // its first round finds the spool empty; the next is an hour away
	lines := makeLines(t, uuid.New(), 1, 4, 10)

	require.NoError(t, f.sink.Send(sendCtx(t), lines, 4))

	f.waitSpoolEmpty(t)
	require.Equal(t, seqRange(1, 4), seqs(f.srv.acceptedEvents(t)))
	require.Len(t, f.srv.all(), 2, "the failed request and the replayed one")
	require.False(t, f.sink.isDown())
}

// When the replayer's retry fails too, the endpoint is down: later Sends
// go to the spool without a request, and the replayer backs off.
func TestWithSpoolAFailedRetryMarksTheEndpointDown(t *testing.T) {
	f := newFixture(t, FormatNDJSON, true, hourRetry, func(s *Settings) { s.ReplayInterval = time.Hour })
	f.srv.setDefault(status(503, nil, "maintenance"))
	f.start(t)
	session := uuid.New()

	require.NoError(t, f.sink.Send(sendCtx(t), makeLines(t, session, 1, 2, 10), 2))
	require.Eventually(t, f.sink.isDown, 10*time.Second, 5*time.Millisecond)
	require.Len(t, f.srv.all(), 2, "the live request and the replayer's one retry")

	require.NoError(t, f.sink.Send(sendCtx(t), makeLines(t, session, 3, 5, 10), 3))
	require.Len(t, f.srv.all(), 2, "no request while the endpoint is down")
	require.Equal(t, 5, f.obs.stats().spooled)
}

// A Retry-After on a live answer holds the replayer too, even when its
// next round was due sooner, up to the replayer's longest pause
// (max_interval). A longer one is cut to that: one answer asking for 31
// years does not hold the spool, and every event behind it, that long.
func TestWithSpoolALiveRetryAfterHoldsTheReplayer(t *testing.T) {
	for name, tc := range map[string]struct {
		retryAfter  string
		maxInterval time.Duration
		atLeast     time.Duration
	}{
		"within max_interval": {"2", 10 * time.Second, 2 * time.Second},
		"cut to max_interval": {"999999999", 300 * time.Millisecond, 300 * time.Millisecond},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, FormatNDJSON, true, func(s *Settings) {
				s.ReplayInterval = 50 * time.Millisecond
				s.Retry.MaxInterval = tc.maxInterval
			})
			f.srv.then(status(429, map[string]string{"Retry-After": tc.retryAfter}, "slow down"))
			f.start(t)

			require.NoError(t, f.sink.Send(sendCtx(t), makeLines(t, uuid.New(), 1, 2, 10), 2))

			f.waitSpoolEmpty(t)
			got := f.srv.all()
			require.Len(t, got, 2)
			require.True(t, got[1].accepted)
			require.GreaterOrEqual(t, got[1].at.Sub(got[0].at), tc.atLeast, "the replayer knocked too soon")
		})
	}
}
