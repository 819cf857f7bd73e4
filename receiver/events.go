package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"context"
	"net/http"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"
)

const formatNDJSON = "ndjson"

// Reasons, the "reason" attribute of the refused events metric.
const (
	reasonInvalid     = "invalid"
	reasonInvalidSpan = "invalid_span"
	reasonRetryable   = "refused_retryable"
	reasonPermanent   = "refused_permanent"
	// reasonInFlight: another request is delivering an event with the same
	// event_id; the client is asked to retry.
	reasonInFlight = "in_flight"
)

// serveEvents is the sandbox event intake: one event as application/json
// (what the Python HttpProxySink posts) or a batch as application/x-ndjson.
func (r *sandboxReceiver) serveEvents(req *http.Request) reply {
	if req.Method != http.MethodPost {
		return methodNotAllowed()
	}
	ct := mediaType(req)
	if ct != contentTypeJSON && ct != contentTypeNDJSON {
		return unsupportedMediaType(req.Header.Get("Content-Type"), contentTypeJSON, contentTypeNDJSON)
	}
	var reqBody admission.Body
	if err := r.admit.Read(req, &reqBody); err != nil {
		return readFailure(err, textReply)
	}
	defer reqBody.Done()

	ctx := req.Context()
	// Before decoding: escapes would make the events' lines up to six
	// times the body, and six bodies decoded at once before their lines
	// were counted held gigabytes.
	if err := reqBody.Settle(admission.EscapeBound(reqBody.Bytes())); err != nil {
		reqBody.Recycle()
		return readFailure(err, textReply)
	}
	if ct == contentTypeNDJSON {
		if lines := largeBatchLines(reqBody.Bytes()); lines > 0 {
			rp := r.serveLargeNDJSON(ctx, &reqBody, lines)
			reqBody.Recycle()
			return rp
		}
	}
	events, format, rp, ok := r.decodeAndCount(ctx, &reqBody, ct)
	if !ok {
		return rp
	}

	fresh, held, dups, ok := r.dropDuplicates(ctx, events)
	if !ok {
		r.countRefused(ctx, reasonInFlight, len(events))
		return inFlightReply(textReply)
	}
	defer r.release(held)
	if rp, ok := r.deliverEvents(ctx, fresh, format); !ok {
		return rp
	}
	return reply{status: http.StatusOK, outcome: outcomeAccepted, contentType: contentTypeJSON, body: ackJSON(len(fresh), dups)}
}

// decodeAndCount decodes the body and counts its events' lines in the
// budget. A large body holds the decode gate from decoding until counted,
// so the next one starts only once this one's lines are counted or
// refused.
func (r *sandboxReceiver) decodeAndCount(ctx context.Context, rb *admission.Body, ct string) ([]auditevent.Event, string, reply, bool) {
	leave, err := r.decoding.Enter(ctx, rb.Addr(), len(rb.Bytes()))
	if err != nil {
		rb.Recycle()
		return nil, "", readFailure(err, textReply), false
	}
	defer leave()
	events, format, err := r.decodeEvents(ctx, rb.Bytes(), ct)
	// Decoding copies what it keeps, so the buffer can go back now.
	rb.Recycle()
	if err != nil {
		return nil, "", textReply(http.StatusBadRequest, outcomeMalformed, err.Error()), false
	}
	if err := rb.Settle(encodedLen(events)); err != nil {
		r.countRefused(ctx, reasonRetryable, len(events))
		return nil, "", readFailure(err, textReply), false
	}
	return events, format, reply{}, true
}

// decodeEvents decodes a body of one event (JSON) or a small batch
// (ndjson), counting the events refused.
func (r *sandboxReceiver) decodeEvents(ctx context.Context, body []byte, ct string) ([]auditevent.Event, string, error) {
	if ct == contentTypeJSON {
		events := make([]auditevent.Event, 1)
		if err := (auditevent.DecodeOptions{}).DecodeInto(body, &events[0]); err != nil {
			r.countRefused(ctx, reasonInvalid, 1)
			return nil, formatJSON, err
		}
		return events, formatJSON, nil
	}
	events, err := decodeNDJSON(body, nil)
	if err != nil {
		r.countRefused(ctx, reasonInvalid, countLines(body))
	}
	return events, formatNDJSON, err
}

// deliverEvents sends decoded events on: as log records to the logs
// pipeline and, through pairing, as spans to the traces pipeline. The
// event ids are committed to the dedupe window once the primary consumer
// (logs if present, else traces) accepted them; the caller releases them
// otherwise. No events is nothing to do. Callers pass at most deliverPiece:
// a larger slice would be delivered whole, at the memory cost deliverPiece
// exists to bound.
func (r *sandboxReceiver) deliverEvents(ctx context.Context, events []auditevent.Event, format string) (reply, bool) {
	if len(events) == 0 {
		return reply{}, true
	}
	if r.nextLogs != nil {
		if err := r.deliverLogs(ctx, events, format); err != nil {
			return refusedReply(err, textReply), false
		}
	}
	if r.pairs != nil {
		err := r.deliverPairs(ctx, events)
		switch {
		case r.nextLogs == nil:
			// The traces pipeline is the only consumer: its answer is the
			// client's, and the events are counted by it.
			r.countDelivery(ctx, len(events), err)
			if err != nil {
				return refusedReply(err, textReply), false
			}
		case err != nil:
			// The audit records are delivered; the spans derived from them
			// are a view that a retry could not restore (the retried events
			// would be duplicates), so the loss is counted and logged.
			r.set.Logger.Warn("Traces pipeline refused spans built from sandbox events", zap.Error(err))
		}
	}
	r.commit(events)
	return reply{}, true
}

// deliverLogs sends events to the logs pipeline as log records.
func (r *sandboxReceiver) deliverLogs(ctx context.Context, events []auditevent.Event, format string) error {
	if len(events) == 0 {
		return nil
	}
	ld := eventsToLogs(events)
	ctx = r.obsrep.StartLogsOp(ctx)
	err := r.nextLogs.ConsumeLogs(ctx, ld)
	r.obsrep.EndLogsOp(ctx, format, len(events), err)
	r.countDelivery(ctx, len(events), err)
	return err
}

func (r *sandboxReceiver) countDelivery(ctx context.Context, n int, err error) {
	if err == nil {
		r.tel.SandboxauditReceiverEventsAccepted.Add(ctx, int64(n))
		return
	}
	// As the client is answered: a 413 is not retried, permanent or not.
	if refusedForGood(refusedReply(err, textReply).outcome) {
		r.countRefused(ctx, reasonPermanent, n)
	} else {
		r.countRefused(ctx, reasonRetryable, n)
	}
}

func (r *sandboxReceiver) countRefused(ctx context.Context, reason string, n int) {
	if n > 0 {
		r.tel.SandboxauditReceiverEventsRefused.Add(ctx, int64(n), reasonAttr(reason))
	}
}

// dropDuplicates removes, in place, the events whose id was delivered before
// or that repeat an earlier event of the same batch, and reserves the ids of
// the rest (held): the caller commits them once delivered, and releases
// held in any case. It returns false, having changed nothing, when another
// request is delivering one of the ids right now.
func (r *sandboxReceiver) dropDuplicates(ctx context.Context, events []auditevent.Event) (fresh []auditevent.Event, held []uuid.UUID, n int, ok bool) {
	if r.dedupe == nil || len(events) == 0 {
		return events, nil, 0, true
	}
	dup, held, n, ok := r.markDuplicates(ctx, eventIDs(events))
	if !ok || n == 0 {
		return events, held, 0, ok
	}
	fresh = events[:0]
	for i := range events {
		if !dup[i] {
			fresh = append(fresh, events[i])
		}
	}
	clear(events[len(fresh):]) // let the dropped events' data go
	return fresh, held, n, true
}

// markDuplicates is dropDuplicates on ids: it sets dup[i] for ids[i] that
// was delivered before or repeats an earlier id of ids, reserves the rest
// and returns them (held, compacted into ids' array) and how many it
// marked; without dedupe, dup and held are nil.
func (r *sandboxReceiver) markDuplicates(ctx context.Context, ids []uuid.UUID) (dup []bool, held []uuid.UUID, n int, ok bool) {
	if r.dedupe == nil || len(ids) == 0 {
		return nil, nil, 0, true
	}
	dup = make([]bool, len(ids))
	if !r.dedupe.Reserve(ids, dup) {
		return nil, nil, 0, false
	}
	held = ids[:0] // in place: the caller is done with ids
	for i, id := range ids {
		if !dup[i] {
			held = append(held, id)
		}
	}
	n = len(ids) - len(held)
	r.countDuplicates(ctx, n)
	return dup, held, n, true
}

// commit remembers the delivered events' ids.
func (r *sandboxReceiver) commit(events []auditevent.Event) {
	if r.dedupe != nil && len(events) > 0 {
		r.dedupe.Commit(eventIDs(events)...)
	}
}

// release gives up the reservation of ids that dropDuplicates or
// markDuplicates held; for ids committed since, it changes nothing.
func (r *sandboxReceiver) release(ids []uuid.UUID) {
	if r.dedupe != nil && len(ids) > 0 {
		r.dedupe.Release(ids...)
	}
}

// encodedLen is the bytes of events' canonical lines.
func encodedLen(events []auditevent.Event) int64 {
	var n int64
	for i := range events {
		n += int64(auditevent.EncodedLen(&events[i]))
	}
	return n
}

func eventIDs(events []auditevent.Event) []uuid.UUID {
	ids := make([]uuid.UUID, len(events))
	for i := range events {
		ids[i] = events[i].EventID
	}
	return ids
}
