package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/netip"

	"github.com/google/uuid"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/ndjson"
	"github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"
)

// deliverPiece is the most events a request holds decoded and hands on in
// one call. A large ndjson body (20 MiB of small events is ≈ 180,000) goes
// in pieces, so that beyond its body, which max_inflight_bytes counts, a
// request holds one piece: its events (≈ 4 times their lines' size), and
// what the pipeline builds from them (log records, pairs, the exporter's
// lines; ≈ 25 times). Whole, a 20 MiB body took ≈ 600 MB.
const deliverPiece = 4096

// countNotTried counts n events that a refusal (rp) kept from being handed
// on, with the refusal's reason, as the refused piece's events are counted:
// for good when the client is told not to retry (a 500, or a 413 for an
// event over the exporter's max_line_bytes), else retryable, and the
// client resends them with the rest.
func (r *sandboxReceiver) countNotTried(ctx context.Context, rp reply, n int) {
	if refusedForGood(rp.outcome) {
		r.countRefused(ctx, reasonPermanent, n)
	} else {
		r.countRefused(ctx, reasonRetryable, n)
	}
}

// serveLargeNDJSON serves an ndjson body of more than deliverPiece events
// (lines is their count) without holding them all decoded: a first pass
// validates every line and keeps only its event id, so a bad line still
// refuses the whole batch and duplicates are known up front; then the fresh
// lines are decoded again, a piece at a time, and delivered in order. It
// stops at the first piece refused, counting the events after it as refused
// too (the client is told the batch was). The pieces before it stay
// delivered: delivery is at-least-once (docs/guarantees.md, "Duplicates").
// Their ids are committed, so the client's retry of the batch gets them
// counted as duplicates while the dedupe window still holds them; past it,
// or with dedupe off, they are written again, as exact copies.
func (r *sandboxReceiver) serveLargeNDJSON(ctx context.Context, rb *admission.Body, lines int) reply {
	body := rb.Bytes()
	ids, size, err := validateNDJSON(ctx, r.decoding, rb.Addr(), body, lines)
	if errors.Is(err, admission.ErrOverBudget) {
		r.countRefused(ctx, reasonRetryable, lines)
		return readFailure(err, textReply)
	}
	if err != nil {
		r.countRefused(ctx, reasonInvalid, lines)
		return textReply(http.StatusBadRequest, outcomeMalformed, err.Error())
	}
	// Counted whole though decoded a piece at a time: an upper bound, and
	// the same as the body's for events without escapes.
	if err := rb.Settle(size); err != nil {
		r.countRefused(ctx, reasonRetryable, lines)
		return readFailure(err, textReply)
	}
	// A line without an event_id is given a new random one by each
	// decoding, so its second-pass id is not the one held; such an event
	// cannot be deduplicated anyway.
	dup, held, dups, ok := r.markDuplicates(ctx, ids)
	if !ok {
		r.countRefused(ctx, reasonInFlight, lines)
		return inFlightReply(textReply)
	}
	defer r.release(held)
	fresh := lines - dups
	piece := make([]auditevent.Event, 0, min(deliverPiece, fresh))
	var opts auditevent.DecodeOptions
	i, handed := 0, 0 // lines seen, fresh events handed on
	for _, text := range ndjson.Lines(body) {
		if i++; dup != nil && dup[i-1] {
			continue
		}
		piece = append(piece, auditevent.Event{})
		if err := r.decoding.DecodeInto(ctx, rb.Addr(), opts, text, &piece[len(piece)-1]); err != nil {
			// The first pass decoded this line; only a client gone while
			// waiting for the gate, or a failing source of random event
			// ids (for a line without one), gets here.
			rp := textReply(http.StatusInternalServerError, outcomeRefusedPermanent, "an event could not be decoded a second time")
			if errors.Is(err, admission.ErrOverBudget) {
				rp = readFailure(err, textReply)
			}
			r.countNotTried(ctx, rp, fresh-handed)
			return rp
		}
		if len(piece) == cap(piece) {
			handed += len(piece)
			if rp, ok := r.deliverEvents(ctx, piece, formatNDJSON); !ok {
				r.countNotTried(ctx, rp, fresh-handed)
				return rp
			}
			piece = piece[:0]
		}
	}
	if rp, ok := r.deliverEvents(ctx, piece, formatNDJSON); !ok {
		return rp
	}
	return reply{status: http.StatusOK, outcome: outcomeAccepted, contentType: contentTypeJSON, body: ackJSON(lines-dups, dups)}
}

// largeBatchLines is the number of events in an ndjson body of more than
// deliverPiece of them, else 0. Counting newlines first (a vectorised
// scan) keeps the usual batch from paying for a pass over its lines: it
// has at most one event more than newlines.
func largeBatchLines(body []byte) int {
	if bytes.Count(body, []byte{'\n'}) < deliverPiece {
		return 0
	}
	if n := countLines(body); n > deliverPiece {
		return n
	}
	return 0
}

// validateNDJSON decodes every line of body (lines of them) into one
// scratch event and returns their event ids and the bytes of their
// canonical lines, or the first bad line's *ndjson.LineError.
// A line that could not wait for the decode gate gives admission.ErrOverBudget;
// addr is the client's, whose turns at the gate its large lines take.
func validateNDJSON(ctx context.Context, gate *admission.DecodeGate, addr netip.Addr, body []byte, lines int) (ids []uuid.UUID, size int64, err error) {
	ids = make([]uuid.UUID, 0, lines)
	var opts auditevent.DecodeOptions
	var e auditevent.Event
	for line, text := range ndjson.Lines(body) {
		e = auditevent.Event{}
		if err := gate.DecodeInto(ctx, addr, opts, text, &e); err != nil {
			if errors.Is(err, admission.ErrOverBudget) {
				return nil, 0, err
			}
			return nil, 0, &ndjson.LineError{Line: line, Err: err}
		}
		ids = append(ids, e.EventID)
		size += int64(auditevent.EncodedLen(&e))
	}
	return ids, size, nil
}
