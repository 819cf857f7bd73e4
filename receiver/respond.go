package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"errors"
	"mime"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.opentelemetry.io/collector/consumer/consumererror"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"
)

const (
	contentTypeJSON     = "application/json"
	contentTypeNDJSON   = "application/x-ndjson"
	contentTypeProtobuf = "application/x-protobuf"
	contentTypeText     = "text/plain; charset=utf-8"

	// retryAfterSeconds is what a 503 asks clients to wait: long enough for a
	// memory limiter or a full queue downstream to drain, short enough that
	// an audit trail does not lag by much.
	retryAfterSeconds = 5

	// maxMessageBytes caps error messages: they may quote a value from the
	// request, and an error body must never echo a whole payload.
	maxMessageBytes = 256
)

// Request outcomes, the "outcome" attribute of the requests metric.
const (
	outcomeAccepted          = "accepted"
	outcomeMalformed         = "malformed"
	outcomeMethodNotAllowed  = "method_not_allowed"
	outcomeTooLarge          = "too_large"
	outcomeUnsupportedType   = "unsupported_media_type"
	outcomeRefusedRetryable  = "refused_retryable"
	outcomeRefusedPermanent  = "refused_permanent"
	outcomeDecompressFailure = "bad_encoding"
	outcomeInFlight          = "in_flight"
	outcomeUnauthenticated   = "unauthenticated"
	outcomeTimeout           = "timeout"
)

// reply is a handler's answer; serve writes it and records the outcome, so
// every path through a handler is counted exactly once.
type reply struct {
	status      int
	outcome     string
	contentType string
	body        []byte
	allow       string // Allow header of a 405
	retryAfter  bool   // Retry-After header of a 503
}

func (rp reply) write(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", rp.contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	if rp.allow != "" {
		h.Set("Allow", rp.allow)
	}
	if rp.retryAfter {
		h.Set("Retry-After", strconv.Itoa(retryAfterSeconds))
	}
	w.WriteHeader(rp.status)
	_, _ = w.Write(rp.body) // the client went away; nothing left to tell it
}

// textReply is a short plain-text error.
func textReply(status int, outcome, msg string) reply {
	return reply{
		status:      status,
		outcome:     outcome,
		contentType: contentTypeText,
		body:        []byte(capMessage(msg) + "\n"),
	}
}

func methodNotAllowed() reply {
	rp := textReply(http.StatusMethodNotAllowed, outcomeMethodNotAllowed, "method not allowed, use POST")
	rp.allow = http.MethodPost
	return rp
}

func unsupportedMediaType(got string, supported ...string) reply {
	// What the client sent is not quoted back: errors never echo headers.
	msg := "unsupported content type"
	if got == "" {
		msg = "missing content type"
	} else if mt, _, err := mime.ParseMediaType(got); err == nil && slices.Contains(supported, mt) {
		// The type is one we take: mediaType refused its charset.
		msg = "unsupported charset (charset=utf-8 or none)"
	}
	msg += ", supported:"
	for i, s := range supported {
		if i > 0 {
			msg += ","
		}
		msg += " " + s
	}
	return textReply(http.StatusUnsupportedMediaType, outcomeUnsupportedType, msg)
}

// downstreamStatus maps a next-consumer error to the HTTP answer: a
// permanent error will fail again however often the client retries (500);
// anything else, such as a memory limiter refusing data, is worth a retry
// later (503 with Retry-After).
func downstreamStatus(err error) (status int, outcome string) {
	if consumererror.IsPermanent(err) {
		return http.StatusInternalServerError, outcomeRefusedPermanent
	}
	return http.StatusServiceUnavailable, outcomeRefusedRetryable
}

// downstreamMessage says why without passing on the consumer's error text,
// which may name internal endpoints or carry data.
func downstreamMessage(status int) string {
	if status == http.StatusServiceUnavailable {
		return "the collector pipeline refused the data for now; retry later"
	}
	return "the collector pipeline failed permanently to accept the data"
}

// replyBuilder makes an error reply in an intake's format: plain text for
// sandbox events, a google.rpc.Status for OTLP.
type replyBuilder func(status int, outcome, msg string) reply

// refusedReply answers a request the next consumer refused. An event over
// the exporter's max_line_bytes is the client's to fix: 413, naming the
// field and the limit (numbers and a field name only, nothing of the data).
// So is one whose Kafka message is over the broker's or the kafka
// exporter's size limit: it would fail again however often it is retried,
// and a 5xx is retried.
func refusedReply(err error, build replyBuilder) reply {
	if tl, ok := errors.AsType[*auditevent.TooLongError](err); ok {
		return build(http.StatusRequestEntityTooLarge, outcomeTooLarge, tl.Error())
	}
	if errors.Is(err, kerr.MessageTooLarge) {
		return build(http.StatusRequestEntityTooLarge, outcomeTooLarge,
			"the events' Kafka message is over the Kafka message size limit (the broker's message.max.bytes or the kafka exporter's producer::max_message_bytes)")
	}
	status, outcome := downstreamStatus(err)
	rp := build(status, outcome, downstreamMessage(status))
	rp.retryAfter = status == http.StatusServiceUnavailable
	return rp
}

// refusedForGood tells whether a refusal's outcome tells the client not to
// retry: a 500, or a 413 for an event or a Kafka message over a size limit.
func refusedForGood(outcome string) bool {
	return outcome == outcomeRefusedPermanent || outcome == outcomeTooLarge
}

// inFlightReply answers a request holding an event that another request is
// delivering right now (typically the same client's resend after a
// timeout): delivering it too would duplicate it, dropping it would lose it
// if the other delivery fails, so the client retries once that is decided.
func inFlightReply(build replyBuilder) reply {
	rp := build(http.StatusServiceUnavailable, outcomeInFlight,
		"an event with the same event_id is being delivered by another request; retry later")
	rp.retryAfter = true
	return rp
}

// readErrorReply is the answer to a body that could not be read.
func readErrorReply(err error) (int, string, string) {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return http.StatusRequestEntityTooLarge, outcomeTooLarge, "request body too large (max_request_body_size)"
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		// The client, or the network, is slow: nothing is wrong with the
		// events. 408, not 400: our HTTP sink spools and retries a 408
		// (OTLP exporters retry neither, so for them nothing changes).
		return http.StatusRequestTimeout, outcomeTimeout, "request body not received in time (read_timeout, min_body_rate or small_body_timeout)"
	}
	if _, ok := errors.AsType[*admission.DecodeError](err); ok {
		return http.StatusBadRequest, outcomeDecompressFailure, "cannot read request body: " + err.Error()
	}
	if errors.Is(err, http.ErrLineTooLong) {
		// net/http's words, "header line too long", point at the headers.
		return http.StatusBadRequest, outcomeMalformed, "cannot read request body: a chunk-size line (Transfer-Encoding: chunked) is over 4096 bytes"
	}
	return http.StatusBadRequest, outcomeMalformed, "cannot read request body: " + err.Error()
}

// ackJSON is the success body of the event intake.
func ackJSON(accepted, duplicates int) []byte {
	b := make([]byte, 0, 48)
	b = append(b, `{"accepted":`...)
	b = strconv.AppendInt(b, int64(accepted), 10)
	b = append(b, `,"duplicates":`...)
	b = strconv.AppendInt(b, int64(duplicates), 10)
	return append(b, '}')
}

// capMessage shortens msg to maxMessageBytes on a rune boundary.
func capMessage(msg string) string {
	if len(msg) <= maxMessageBytes {
		return msg
	}
	cut := maxMessageBytes
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "…"
}

// grpcCode is the google.rpc.Status code for an HTTP status, as the OTLP
// specification pairs them.
func grpcCode(status int) codes.Code {
	switch status {
	case http.StatusServiceUnavailable:
		return codes.Unavailable
	case http.StatusInternalServerError:
		return codes.Internal
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	default:
		return codes.InvalidArgument
	}
}

// otlpStatusReply is an OTLP/HTTP error: a google.rpc.Status in the
// request's encoding, as OTLP exporters expect (and as otlpreceiver writes
// it).
func otlpStatusReply(status int, outcome, contentType, msg string) reply {
	// A proto string must be UTF-8, the one thing that could make
	// marshaling fail; the message may quote bytes from the request.
	st := &spb.Status{
		Code:    int32(grpcCode(status)),
		Message: strings.ToValidUTF8(capMessage(msg), "\uFFFD"),
	}
	var body []byte
	if contentType == contentTypeProtobuf {
		body, _ = proto.Marshal(st)
	} else {
		contentType = contentTypeJSON
		body, _ = protojson.Marshal(st)
	}
	return reply{status: status, outcome: outcome, contentType: contentType, body: body}
}
