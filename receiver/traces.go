package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/google/uuid"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"
)

const (
	formatProtobuf = "protobuf"
	formatJSON     = "json"
)

// serveTraces is the OTLP/HTTP traces intake. Sandbox spans become their
// start and finish events for the logs pipeline; all spans go on unchanged
// to the traces pipeline.
func (r *sandboxReceiver) serveTraces(req *http.Request) reply {
	if req.Method != http.MethodPost {
		return methodNotAllowed()
	}
	ct := mediaType(req)
	if ct != contentTypeProtobuf && ct != contentTypeJSON {
		return unsupportedMediaType(req.Header.Get("Content-Type"), contentTypeProtobuf, contentTypeJSON)
	}
	// Errors are google.rpc.Status messages in the request's encoding, as
	// OTLP/HTTP clients expect.
	otlpReply := func(status int, outcome, msg string) reply {
		return otlpStatusReply(status, outcome, ct, msg)
	}
	var reqBody admission.Body
	if err := r.admit.Read(req, &reqBody); err != nil {
		return readFailure(err, otlpReply)
	}
	defer reqBody.Done()
	objects, rp, ok := settleTraces(&reqBody, ct, otlpReply)
	if !ok {
		return rp
	}
	ctx := req.Context()
	leave, err := r.decoding.Enter(ctx, reqBody.Addr(), len(reqBody.Bytes()))
	if err != nil {
		reqBody.Recycle()
		return readFailure(err, otlpReply)
	}
	leave = sync.OnceFunc(leave)
	defer leave() // a traces-only pipeline counts no lines
	format := otlpFormat(ct)
	td, err := decodeTraces(&reqBody, format)
	if err != nil {
		return otlpReply(http.StatusBadRequest, outcomeMalformed, otlpDecodeMessage(err))
	}
	return r.deliverTraces(ctx, td, &reqBody, objects, ct, otlpReply, leave)
}

// settleTraces bounds what decoding the body costs and settles the
// body's admission on it; objects is the bound of the decoded request
// (OTLPBound). Unless ok, the request must be answered with rp instead.
//
// Before decoding, as the event intake does: a span's data full of
// escapes makes lines up to six times the body, decoded OTLP holds a
// copy of it besides, and its spans and attributes cost up to a
// hundred times the bytes they take.
func settleTraces(reqBody *admission.Body, ct string, otlpReply replyBuilder) (objects int64, rp reply, ok bool) {
	objects = admission.OTLPBound(reqBody.Bytes(), ct == contentTypeProtobuf)
	if objects > reqBody.Limit() {
		reqBody.Recycle()
		return 0, otlpReply(http.StatusRequestEntityTooLarge, outcomeTooLarge,
			"the request holds more spans and attributes than max_inflight_bytes can decode; send fewer per request"), false
	}
	if err := reqBody.Settle(admission.EscapeBound(reqBody.Bytes()) + objects); err != nil {
		reqBody.Recycle()
		return 0, readFailure(err, otlpReply), false
	}
	return objects, reply{}, true
}

// otlpFormat names a request's OTLP encoding: how it is decoded, and the
// format its metrics count it under.
func otlpFormat(ct string) string {
	if ct == contentTypeJSON {
		return formatJSON
	}
	return formatProtobuf
}

// deliverTraces hands the decoded spans to the logs pipeline (as events)
// and to the traces pipeline, and answers with the export response.
// leave ends the request's decoding admission; objects is as for
// settleTraces.
func (r *sandboxReceiver) deliverTraces(ctx context.Context, td ptrace.Traces, reqBody *admission.Body, objects int64,
	ct string, otlpReply replyBuilder, leave func(),
) reply {
	format := otlpFormat(ct)
	resp := ptraceotlp.NewExportResponse()
	if r.nextLogs == nil {
		leave()
	} else {
		held, rp, ok := r.tracesToEvents(ctx, td, reqBody, objects, format, resp, otlpReply, leave)
		// Held to the end of the request, as the event intake holds its own.
		defer r.release(held)
		if !ok {
			return rp
		}
	}
	if r.nextTraces != nil && td.SpanCount() > 0 {
		spans := td.SpanCount()
		ctx := r.obsrep.StartTracesOp(ctx)
		err := r.nextTraces.ConsumeTraces(ctx, td)
		r.obsrep.EndTracesOp(ctx, format, spans, err)
		if err != nil {
			return refusedReply(err, otlpReply)
		}
	}
	return otlpResponse(resp, ct, otlpReply)
}

// decodeTraces decodes an OTLP export request and gives the body's
// buffer back: pdata copies what it keeps.
func decodeTraces(reqBody *admission.Body, format string) (ptrace.Traces, error) {
	otlpReq := ptraceotlp.NewExportRequest()
	var err error
	if format == formatJSON {
		err = otlpReq.UnmarshalJSON(reqBody.Bytes())
	} else {
		err = otlpReq.UnmarshalProto(reqBody.Bytes())
	}
	reqBody.Recycle()
	return otlpReq.Traces(), err
}

// tracesToEvents maps the request's sandbox spans to audit events and
// delivers them to the logs pipeline; objects is the bound of the decoded
// request (OTLPBound). Spans that cannot be mapped are rejected in resp's
// partial success when no traces pipeline takes them.
// Unless ok, the request must be answered with rp instead. held is the
// event ids reserved for the request, for the caller to release.
func (r *sandboxReceiver) tracesToEvents(ctx context.Context, td ptrace.Traces, reqBody *admission.Body, objects int64, format string,
	resp ptraceotlp.ExportResponse, otlpReply replyBuilder, leave func(),
) (held []uuid.UUID, rp reply, ok bool) {
	events, st := r.mapper.AppendTraces(nil, td)
	// Counted at their lines, as the event intake counts its events, and
	// the decoded request, still held; the next large body decodes once
	// these are.
	err := reqBody.Settle(encodedLen(events) + objects)
	leave()
	if err != nil {
		r.countRefused(ctx, reasonRetryable, len(events))
		return nil, readFailure(err, otlpReply), false
	}
	r.countSpansSkipped(ctx, st.NotSandbox)
	if st.Invalid > 0 {
		r.set.Logger.Warn("Sandbox spans could not be mapped to audit events",
			zap.Int("spans", st.Invalid), zap.String("first_error", capMessage(st.FirstInvalid.Error())))
		r.countRefused(ctx, reasonInvalidSpan, st.Invalid)
		if r.nextTraces == nil {
			// The spans go nowhere else: tell the client they were rejected.
			resp.PartialSuccess().SetRejectedSpans(int64(st.Invalid))
			resp.PartialSuccess().SetErrorMessage(capMessage(fmt.Sprintf(
				"%d sandbox spans could not be mapped to audit events; first: %v", st.Invalid, st.FirstInvalid)))
		}
	}
	fresh, held, _, fits := r.dropDuplicates(ctx, events)
	if !fits {
		r.countRefused(ctx, reasonInFlight, len(events))
		return nil, inFlightReply(otlpReply), false
	}
	if err := r.deliverLogs(ctx, fresh, format); err != nil {
		return held, refusedReply(err, otlpReply), false
	}
	// The audit trail has them: a retry after a traces failure must not
	// write them twice.
	r.commit(fresh)
	return held, reply{}, true
}

// otlpResponse answers an accepted request with its export response, in
// the request's encoding.
func otlpResponse(resp ptraceotlp.ExportResponse, ct string, otlpReply replyBuilder) reply {
	var body []byte
	var err error
	if ct == contentTypeJSON {
		body, err = resp.MarshalJSON()
	} else {
		body, err = resp.MarshalProto()
	}
	if err != nil {
		return otlpReply(http.StatusInternalServerError, outcomeRefusedPermanent, "cannot encode the response")
	}
	return reply{status: http.StatusOK, outcome: outcomeAccepted, contentType: ct, body: body}
}

// otlpDecodeMessage is the decoder's reason without the input it quotes:
// pdata's JSON decoder appends "error found in #N byte of ...|<input>|...",
// and that input may hold attribute values such as tokens.
func otlpDecodeMessage(err error) string {
	msg := err.Error()
	for _, marker := range []string{", error found in #", "...|"} {
		if i := strings.Index(msg, marker); i >= 0 {
			msg = msg[:i]
		}
	}
	return "cannot decode OTLP traces request: " + msg
}
