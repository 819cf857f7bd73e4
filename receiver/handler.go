package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"
)

// Endpoints, the "endpoint" attribute of the receiver's metrics.
const (
	endpointTraces = "traces"
	endpointEvents = "events"
	endpointOther  = "other"
)

// outcomeOverBudget: the bodies in flight hold max_inflight_bytes; 503.
const outcomeOverBudget = "over_budget"

func endpointOf(cfg *Config, path string) string {
	switch path {
	case cfg.TracesPath:
		return endpointTraces
	case cfg.EventsPath:
		return endpointEvents
	}
	return endpointOther
}

// handler adapts a reply-returning handler: it writes the reply and counts
// the request by endpoint, outcome and status code.
func (r *sandboxReceiver) handler(endpoint string, serve func(*http.Request) reply) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		req, cancel := r.boundByWriteTimeout(req)
		defer cancel()
		late := r.answerLate(w, req, endpoint)
		// On every path, a panic of the pipeline too (net/http recovers
		// it): a timer firing after the handler returned would write to
		// a ResponseWriter net/http has taken back.
		defer late.claim()
		rp := serve(req)
		if late.claim() {
			rp.write(w)
			r.recordRequest(req.Context(), endpoint, rp)
		}
	})
}

// refuseAsterisk answers a request whose target is "*" and whose method is
// not OPTIONS (net/http answers OPTIONS * itself), such as an HTTP/2
// client's preface: the mux would send an empty 400.
func (r *sandboxReceiver) refuseAsterisk(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Connection", "close")
	rp := textReply(http.StatusBadRequest, outcomeMalformed,
		"request target * is for OPTIONS only; POST over HTTP/1.1 to "+r.cfg.EventsPath+" or "+r.cfg.TracesPath)
	rp.write(w)
	r.recordRequest(req.Context(), endpointOther, rp)
}

// boundByWriteTimeout ends the request's context shortly before the
// server's write_timeout: past it the server closes the connection, so a
// pipeline slower than that would leave the client with no answer at all
// instead of a 503 to retry.
func (r *sandboxReceiver) boundByWriteTimeout(req *http.Request) (*http.Request, context.CancelFunc) {
	by := r.cfg.answerBy()
	if by <= 0 {
		return req, func() {}
	}
	ctx, cancel := context.WithTimeout(req.Context(), by)
	return req.WithContext(ctx), cancel
}

// acceptedAttrs maps each endpoint to the attributes of an accepted
// request, built once (read only afterwards): building a set sorts and
// hashes it, which every successful request would otherwise pay for.
func acceptedAttrs() map[string]metric.AddOption {
	m := map[string]metric.AddOption{}
	for _, endpoint := range [...]string{endpointTraces, endpointEvents, endpointOther} {
		m[endpoint] = requestAttrs(endpoint, outcomeAccepted, http.StatusOK)
	}
	return m
}

func (r *sandboxReceiver) recordRequest(ctx context.Context, endpoint string, rp reply) {
	attrs, ok := r.accepted[endpoint]
	if rp.status != http.StatusOK || rp.outcome != outcomeAccepted || !ok {
		attrs = requestAttrs(endpoint, rp.outcome, rp.status)
	}
	r.tel.SandboxauditReceiverRequests.Add(ctx, 1, attrs)
}

func requestAttrs(endpoint, outcome string, status int) metric.AddOption {
	return metric.WithAttributeSet(attribute.NewSet(
		attribute.String("endpoint", endpoint),
		attribute.String("outcome", outcome),
		attribute.Int("http.response.status_code", status),
	))
}

// mediaType returns the media type of the request without parameters
// (charset and the like), lowercased; "" when absent or unparsable. A bare
// type we accept, what clients send nearly always, is recognized without
// mime.ParseMediaType, which allocates a map of parameters per call.
func mediaType(req *http.Request) string {
	ct := req.Header.Get("Content-Type")
	for _, known := range [...]string{contentTypeJSON, contentTypeNDJSON, contentTypeProtobuf} {
		if strings.EqualFold(ct, known) {
			return known
		}
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return ""
	}
	// JSON is UTF-8 (RFC 8259): a body labelled with another charset would
	// be read as text it is not, so it is refused (415) instead.
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
		return ""
	}
	return mt
}

// readFailure answers a body that could not be read, in the intake's format.
func readFailure(err error, build replyBuilder) reply {
	if errors.Is(err, admission.ErrOverBudget) {
		rp := build(http.StatusServiceUnavailable, outcomeOverBudget, admission.ErrOverBudget.Error())
		rp.retryAfter = true
		return rp
	}
	return build(readErrorReply(err))
}
