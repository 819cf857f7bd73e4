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
// next round was due sooner (within the longest pause, max_interval).
func TestWithSpoolALiveRetryAfterHoldsTheReplayer(t *testing.T) {
	f := newFixture(t, FormatNDJSON, true, func(s *Settings) {
		s.ReplayInterval = 100 * time.Millisecond
		s.Retry.MaxInterval = 10 * time.Second
	})
	f.srv.then(status(429, map[string]string{"Retry-After": "2"}, "slow down"))
	f.start(t)
	lines := makeLines(t, uuid.New(), 1, 2, 10)

	require.NoError(t, f.sink.Send(sendCtx(t), lines, 2))

	f.waitSpoolEmpty(t)
	got := f.srv.all()
	require.Len(t, got, 2)
	require.True(t, got[1].accepted)
	require.GreaterOrEqual(t, got[1].at.Sub(got[0].at), 2*time.Second, "the replayer knocked before Retry-After")
}

// A Retry-After longer than the replayer's longest pause is cut to it: one
// answer asking for 31 years does not hold the spool, and every event
// behind it, that long. Up to the cap it is still honoured.
func TestWithSpoolAHugeRetryAfterIsCutToTheLongestPause(t *testing.T) {
	f := newFixture(t, FormatNDJSON, true, func(s *Settings) {
		s.ReplayInterval = 50 * time.Millisecond
		s.Retry.MaxInterval = 300 * time.Millisecond
	})
	f.srv.then(status(429, map[string]string{"Retry-After": "999999999"}, "slow down"))
	f.start(t)
	lines := makeLines(t, uuid.New(), 1, 2, 10)

	require.NoError(t, f.sink.Send(sendCtx(t), lines, 2))

	f.waitSpoolEmpty(t)
	got := f.srv.all()
	require.Len(t, got, 2)
	require.True(t, got[1].accepted)
	require.GreaterOrEqual(t, got[1].at.Sub(got[0].at), 300*time.Millisecond, "the replayer knocked before the longest pause")
}
