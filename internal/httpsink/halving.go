package httpsink

import (
	"context"
	"errors"
	"net/http"
)

// halved is what postHalving settled of a batch: a prefix of it, acked or
// refused line by line in order.
type halved struct {
	acked   int          // lines acknowledged
	refused int          // lines the endpoint refused as content
	refusal *StatusError // the first such refusal
	settled int          // bytes of the batch's prefix acked or refused
}

func (h halved) then(next halved) halved {
	h.acked += next.acked
	h.refused += next.refused
	h.settled += next.settled
	if h.refusal == nil {
		h.refusal = next.refusal
	}
	return h
}

// postHalving posts body (n lines) with post. When the endpoint answers 413
// to more than one line it posts each half instead, in order, down to
// single lines: the batch is ours (the replayer joins many pushes, each
// accepted live, into one request), and an endpoint's body limit (nginx's
// default is 1 MiB) is no reason to drop lines it takes in smaller
// requests. Any other refusal of the content refuses what was sent. It
// stops at the first failure that is not a refusal, which it returns with
// what was settled before it.
func postHalving(ctx context.Context, body []byte, n int, post func(context.Context, []byte) error) (halved, error) {
	err := post(ctx, body)
	var se *StatusError
	switch {
	case err == nil:
		return halved{acked: n, settled: len(body)}, nil
	case !errors.As(err, &se) || !se.Permanent():
		return halved{}, err
	case se.Code != http.StatusRequestEntityTooLarge || n < 2:
		return halved{refused: n, refusal: se, settled: len(body)}, nil
	}
	first, k := nextChunk(body, n/2, len(body))
	h, err := postHalving(ctx, first, k, post)
	if err != nil {
		return h, err
	}
	rest, err := postHalving(ctx, body[len(first):], n-k, post)
	return h.then(rest), err
}
