package httpsink

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"
)

// runReplayer sends the spool in rounds until ctx ends. A round runs when
// the timer fires, or at once when lines were spooled while the endpoint is
// believed up (one failed request or a caller's deadline sent them there). A
// failed round (network error, 429, 5xx, or the endpoint refusing us) marks
// the endpoint down and doubles the pause, from ReplayInterval up to
// max(ReplayInterval, Retry.MaxInterval), and never earlier than the
// server's Retry-After. The lines stay in the spool. A round that delivered
// lines before it failed is not a failed round: the next one starts at once
// (after any Retry-After): counted as one, a few per cent of transient
// errors would hold a spool's drain to a few events a second.
func (s *Sink) runReplayer(ctx context.Context) {
	defer close(s.replayerDone)
	defer s.saveAhead() // before replayerDone: Shutdown closes the spool after it
	failures := 0
	var upkeep error // the spool's trouble last logged
	failing := false // a round failed since the last that did not
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
			if s.isDown() {
				continue // the timer holds the backoff
			}
		case <-timer.C:
		}
		// Never before the server's Retry-After: a live answer can set it
		// after this timer was armed.
		if d := time.Until(s.waitUntil()); d > 0 {
			timer.Reset(d)
			continue
		}
		sent, err := s.replayRound(ctx)
		if ctx.Err() != nil {
			return
		}
		upkeep = s.logUpkeep(upkeep)
		failing = s.logReplayFailure(err, failing)
		failed := err != nil && sent == 0
		s.probe = failed
		if failed {
			failures++
		} else {
			failures = 0
		}
		wait := s.nextRoundIn(failures, time.Now())
		if err != nil && !failed { // it made progress: at once
			wait = max(0, time.Until(s.waitUntil()))
		}
		if se := endpointRefusal(err); se != nil {
			// Once per round: at most one line per capped backoff step.
			s.logEndpointRefused(se, "replay", zap.String("outcome", "kept in the spool"),
				zap.Int64("spool_bytes", s.spool.Size()),
				zap.Duration("next_attempt_in", wait), zap.Int("failed_rounds", failures))
		}
		timer.Reset(wait)
	}
}

// logReplayFailure says at WARN why a round failed, once per episode of
// failing rounds (an endpoint refusing us has its own ERROR each round),
// and returns whether an episode is under way.
func (s *Sink) logReplayFailure(err error, failing bool) bool {
	if err == nil {
		return false
	}
	if !failing && endpointRefusal(err) == nil {
		s.set.Logger.Warn("spool replay failed; the lines stay in the spool and replay goes on with backoff",
			zap.String("endpoint", s.poster.safeURL), zap.Int64("spool_bytes", s.spool.Size()), zap.Error(err))
	}
	return true
}

// replayPost is poster.post bounded by ReplayRequestTimeout when the
// client has no timeout of its own.
func (s *Sink) replayPost(ctx context.Context, body []byte) error {
	if s.poster.client.Timeout == 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.set.ReplayRequestTimeout)
		defer cancel()
	}
	return s.poster.post(ctx, body)
}

// logUpkeep logs, once each, that the spool could not save its
// acknowledged offset or trim itself, and that it managed again; it
// returns the state it logged. Delivery goes on either way.
func (s *Sink) logUpkeep(logged error) error {
	now := s.spool.Upkeep()
	switch {
	case now != nil && logged == nil:
		s.set.Logger.Error("Spool could not save the offset the endpoint acknowledged or trim its file (is its disk full?); "+
			"delivery goes on, but a restart before the offset is saved resends the lines after the saved one",
			zap.Error(now))
	case now == nil && logged != nil:
		s.set.Logger.Info("Spool saved its acknowledged offset and trimmed its file again")
	}
	return now
}

// nextRoundIn is the pause after a round; failures counts the failed
// rounds in a row.
func (s *Sink) nextRoundIn(failures int, now time.Time) time.Duration {
	wait := s.set.ReplayInterval
	if failures > 0 {
		limit := s.longestPause()
		for i := 1; i < failures && wait < limit; i++ {
			wait *= 2
		}
		wait = min(wait, limit)
	}
	if nb := s.waitUntil(); !nb.IsZero() {
		wait = max(wait, nb.Sub(now))
	}
	return wait
}

// longestPause is the most the replayer waits between rounds:
// retry_on_failure.max_interval (or replay_interval, when longer).
func (s *Sink) longestPause() time.Duration {
	return max(s.set.ReplayInterval, s.set.Retry.MaxInterval)
}

// replayRound sends the spool, oldest line first: in ndjson one request
// at a time, without retries; in event format a window of requests, each
// line retried once (see replayEvents). The first line not delivered ends
// the round (the next round is the retry). It returns the lines it settled
// and the delivery failure that ended the round, if any.
func (s *Sink) replayRound(ctx context.Context) (int, error) {
	if !s.spool.Pending() && s.spool.Upkeep() == nil {
		s.markUp()
		return 0, nil
	}
	sent, err := s.spool.ReplayAcked(ctx, s.replayBatchLines(), s.set.MaxBatchBytes, s.replaySend)
	s.observeSpoolSize()
	if err == nil {
		s.markUp()
		s.set.Logger.Debug("spool replay round done", zap.Int("lines", sent))
		if s.spool.Pending() {
			s.kick() // lines arrived during the round
		}
		return sent, nil
	}
	if ctx.Err() != nil {
		return sent, err
	}
	s.markDown(err, notBeforeOf(err))
	s.set.Logger.Debug("spool replay round stopped", zap.Int("lines", sent), zap.Error(err))
	return sent, err
}

// notBeforeOf is when err's Retry-After lets the next attempt run (zero:
// none asked).
func notBeforeOf(err error) time.Time {
	var se *StatusError
	if errors.As(err, &se) && se.RetryAfter > 0 {
		return time.Now().Add(se.RetryAfter)
	}
	return time.Time{}
}

// replaySend is the spool's send callback: one POST per batch (in event
// format, one per line, by replayEvents), halved on a refusal (batchPoster). A
// refusal of the content (StatusError.Permanent) drops the lines visibly
// and acknowledges them: kept, they would block the spool forever. Every
// other failure, the endpoint refusing us included, ends the round with
// the rest of the batch still in the spool. Each part settled is
// acknowledged as it is (ack), so neither a later failure nor a crash
// sends it again.
func (s *Sink) replaySend(ctx context.Context, batch []byte, lines int, ack func(bytes, lines int)) error {
	if s.set.Format == FormatEvent && lines > 1 {
		return s.replayEvents(ctx, batch, ack)
	}
	hv := batchPoster{post: s.replayPost, anyRefusal: true, onSettled: func(part, done outcome) {
		s.replaySettled(ctx, part, done, ack)
	}}
	_, err := hv.send(ctx, batch, lines)
	return err
}

// replaySettled counts and logs a part of a replay batch settled, then
// acknowledges everything settled so far (done). Counted and logged before
// the offset moves past it: a crash between the two must not lose a
// refused line without a trace.
func (s *Sink) replaySettled(ctx context.Context, part, done outcome, ack func(bytes, lines int)) {
	s.countSettled(ctx, part)
	ack(done.settled, done.acked+done.refused)
}

// countSettled counts part as replayed and logs and counts its refused
// lines as dropped.
func (s *Sink) countSettled(ctx context.Context, part outcome) {
	if part.acked > 0 {
		s.set.Observer.Replayed(ctx, part.acked)
	}
	if part.refused > 0 {
		s.dropped(ctx, part.refused, part.refusal, "replay")
	}
}
