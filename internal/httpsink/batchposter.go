package httpsink

import (
	"context"
	"errors"
	"net/http"
)

// outcome is what batchPoster.send settled of a batch: a prefix of it,
// acked or refused line by line in order.
type outcome struct {
	acked   int          // lines acknowledged
	refused int          // lines the endpoint refused as content
	refusal *StatusError // the first such refusal
	settled int          // bytes of the batch's prefix acked or refused
}

// plus is h followed by next, the outcome of the lines after h's.
func (h outcome) plus(next outcome) outcome {
	h.acked += next.acked
	h.refused += next.refused
	h.settled += next.settled
	if h.refusal == nil {
		h.refusal = next.refusal
	}
	return h
}

// misconfiguredLimit is the largest line whose 413 says the endpoint's
// body limit is wrong rather than the line too large: no event that small
// (audit lines are a few hundred bytes) is too large for a sane endpoint,
// and dropping it would empty the spool, a line at a time, during a deploy
// with a broken proxy. Kept small: a real limit below a larger line would
// hold the spool until the operator raises it (an ERROR each round says so).
const misconfiguredLimit = 8 << 10

// batchPoster posts a batch of lines and, as the endpoint's answers ask,
// its halves in order, down to single lines.
type batchPoster struct {
	post func(context.Context, []byte) error
	// anyRefusal halves on every refusal of the content, not only on 413:
	// the replayer's batches join pushes whose clients were all
	// acknowledged, so one line the endpoint refuses must not take the
	// others with it. A live push is one client's batch, refused whole.
	anyRefusal bool
	// onSettled, when set, hears of each part acknowledged or refused, in
	// order, as it is settled, with all settled so far (the replayer saves
	// its offset there).
	onSettled func(part, done outcome)
	done      outcome
}

// record adds part, the next part settled, to what is settled so far and
// tells onSettled.
func (hv *batchPoster) record(part outcome) outcome {
	hv.done = hv.done.plus(part)
	if hv.onSettled != nil {
		hv.onSettled(part, hv.done)
	}
	return part
}

// send posts body (n lines). A 413 to more than one line (to any refusal
// of the content with anyRefusal) posts each half instead: the batch is
// ours, and an endpoint's body limit (nginx's default is 1 MiB) is no
// reason to drop lines it takes in smaller requests. It stops at the first
// failure that is not a refusal, which it returns with what was settled
// before it.
func (hv *batchPoster) send(ctx context.Context, body []byte, n int) (outcome, error) {
	err := hv.post(ctx, body)
	var se *StatusError
	switch {
	case err == nil:
		return hv.record(outcome{acked: n, settled: len(body)}), nil
	case !errors.As(err, &se) || !se.Permanent():
		return outcome{}, err
	case se.Code == http.StatusRequestEntityTooLarge && n == 1 && len(body) <= misconfiguredLimit:
		limit := *se
		limit.LimitBelowEvents = true
		return outcome{}, &limit
	case n < 2 || se.Code != http.StatusRequestEntityTooLarge && !hv.anyRefusal:
		return hv.record(outcome{refused: n, refusal: se, settled: len(body)}), nil
	}
	first, k := nextBatch(body, n/2, len(body))
	h, err := hv.send(ctx, first, k)
	if err != nil {
		return h, err
	}
	rest, err := hv.send(ctx, body[len(first):], n-k)
	return h.plus(rest), err
}
