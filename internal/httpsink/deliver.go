package httpsink

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/config/configretry"
	"go.uber.org/zap"
)

// delivery is what became of a run of lines on the live path.
type delivery struct {
	acked   int   // lines the endpoint acknowledged
	dropped int   // lines refused with a permanent status
	permErr error // the permanent errors, joined (nil if none)
	// rest is the undelivered suffix of the input (restN lines) and err
	// why: retries exhausted, the endpoint refusing us (a *StatusError
	// whose EndpointRefused is true), or ctx done.
	rest  []byte
	restN int
	err   error
	// notBefore is when the server said it would be back (Retry-After
	// that did not fit in the retry budget); zero if it did not say.
	notBefore time.Time
}

// deliver sends lines in requests of the configured shape, each retried per
// s.liveRetry(). Requests go out in order; the first request that cannot be
// delivered ends the run and it and everything after it are returned as
// rest. A request whose content is refused (StatusError.Permanent) is
// dropped and the run goes on.
func (s *Sink) deliver(ctx context.Context, lines []byte) (d delivery) {
	refusals := 0
	defer func() {
		if refusals > 1 {
			d.permErr = fmt.Errorf("%d requests refused permanently, the first: %w", refusals, d.permErr)
		}
	}()
	var notBefore time.Time
	hv := batchPoster{post: func(ctx context.Context, body []byte) (err error) {
		notBefore, err = s.postWithRetry(ctx, body)
		return err
	}}
	for len(lines) > 0 {
		batch, n := nextBatch(lines, s.set.MaxBatchLines, s.set.MaxBatchBytes)
		h, err := hv.send(ctx, batch, n)
		d.acked += h.acked
		if h.refused > 0 {
			d.dropped += h.refused
			refusals++
			if d.permErr == nil {
				d.permErr = h.refusal
			}
			s.dropped(ctx, h.refused, h.refusal, "live")
		}
		lines = lines[h.settled:]
		if err != nil {
			d.rest, d.restN, d.err, d.notBefore = lines, countLines(lines), err, notBefore
			return d
		}
	}
	return d
}

// postWithRetry posts body until it is acknowledged, refused (content or
// endpoint: retrying at once cannot help either), the retry budget is
// spent or ctx is done. notBefore is set when the last answer carried a
// Retry-After the loop did not wait for.
func (s *Sink) postWithRetry(ctx context.Context, body []byte) (notBefore time.Time, err error) {
	bo := newBackoff(s.liveRetry(), time.Now())
	for {
		err = s.poster.post(ctx, body)
		if err == nil {
			return time.Time{}, nil
		}
		var se *StatusError
		isStatus := errors.As(err, &se)
		if isStatus && se.Permanent() {
			return time.Time{}, err
		}
		if isStatus && se.EndpointRefused() {
			if se.RetryAfter > 0 {
				notBefore = time.Now().Add(se.RetryAfter)
			}
			return notBefore, err
		}
		if ctx.Err() != nil {
			return time.Time{}, interrupted(ctx, err)
		}
		var retryAfter time.Duration
		if isStatus {
			retryAfter = se.RetryAfter
		}
		now := time.Now()
		wait, ok := bo.next(now, retryAfter)
		if !ok {
			if retryAfter > 0 {
				notBefore = now.Add(retryAfter)
			}
			return notBefore, err
		}
		s.set.Logger.Debug("HTTP delivery failed, retrying",
			zap.Error(err), zap.Duration("wait", wait))
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return time.Time{}, interrupted(ctx, err)
		}
	}
}

// liveRetry is the backoff of a Send's own requests: Settings.Retry without
// a spool, none with one. With a spool a failed request is spooled at once
// and the replayer retries it: backing off live would hold the caller
// (through the receiver, a client with its own, often shorter, deadline)
// for the whole push timeout only to spool the lines anyway.
func (s *Sink) liveRetry() configretry.BackOffConfig {
	cfg := s.set.Retry
	if s.spool != nil {
		cfg.Enabled = false
	}
	return cfg
}

// interrupted adds why ctx ended to err, unless err already says it.
func interrupted(ctx context.Context, err error) error {
	cause := context.Cause(ctx)
	if errors.Is(err, cause) {
		return err
	}
	return fmt.Errorf("%w (interrupted: %w)", err, cause)
}
