package sandboxtrace

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/status"

	"github.com/sandboxaudit/sandboxaudit/internal/safetext"
)

// Prefixes of the texts otlptracehttp and otlploghttp quote a reply in.
const (
	bodyPrefix      = "body: "
	retryablePrefix = "retry-able request failure: "
	partialPrefix   = "OTLP partial success: "
	// emptyBody is what the exporters write for a reply with no body.
	emptyBody = "(empty)"
	// partialWidth is how much of a partial success message is kept, as
	// DirectLogExporter keeps of a rejection's.
	partialWidth = 200
)

// replyError is an exporter's error with the collector's reply left out
// of its text. otlptracehttp and otlploghttp quote a failed reply's body
// whole ("failed to send to URL: 400 Bad Request (body: …)"), and a
// collector, or a proxy before it, may echo the request there, with the
// credentials its events carry before redaction. Unwrap returns the
// exporter's error, so errors.Is, errors.As and refusedWhole see it as
// before.
type replyError struct {
	text string
	err  error
}

func (e *replyError) Error() string { return e.text }
func (e *replyError) Unwrap() error { return e.err }

// scrubReply is the exporter's error as sandboxtrace hands it on, to
// otel.Handle and to callers: every export's error passes here first.
// Each body or gRPC status message the exporter quotes is shown as its
// length, a partial success message is cut, and control characters are
// escaped. An error that quotes no reply, or was scrubbed already, is
// returned as it is.
func scrubReply(err error) error {
	var done *replyError
	if err == nil || errors.As(err, &done) {
		return err
	}
	quotes := replyQuotes(err)
	if len(quotes) == 0 {
		return err
	}
	text := err.Error()
	for _, q := range quotes {
		text = strings.ReplaceAll(text, q.raw, q.shown)
	}
	return &replyError{text: safetext.Escape(text), err: err}
}

// quote is an error's text that quotes a reply, and what is shown instead.
type quote struct{ raw, shown string }

// replyQuotes finds the errors in err's chain that quote a reply. Bodies
// come first: replaced first, a body that holds a partial success's text
// cannot keep itself from being replaced.
func replyQuotes(err error) []quote {
	var bodies, partials []quote
	anyInChain(err, func(e error) bool {
		if q, ok := bodyQuote(e); ok {
			bodies = append(bodies, q)
		} else if q, ok := statusQuote(e); ok {
			bodies = append(bodies, q)
		} else if q, ok := partialQuote(e); ok {
			partials = append(partials, q)
		}
		return false // visit them all
	})
	return append(bodies, partials...)
}

// bodyQuote recognises the exporters' error for a reply that is not a
// success: it wraps "body: " and the body, after the status ("failed to
// send to URL: 400 Bad Request (body: …)") or after "retry-able request
// failure: " (a 429, 502, 503 or 504).
func bodyQuote(e error) (quote, bool) {
	u, ok := e.(interface{ Unwrap() error })
	if !ok || u.Unwrap() == nil {
		return quote{}, false
	}
	text, body := e.Error(), u.Unwrap().Error()
	if !strings.HasPrefix(body, bodyPrefix) {
		return quote{}, false
	}
	shown := shownBody(body)
	switch {
	case text == retryablePrefix+body:
		return quote{text, retryablePrefix + shown}, true
	case otlpHTTPStatus(text) != 0 && strings.HasSuffix(text, "("+body+")"):
		head := strings.TrimSuffix(text, "("+body+")")
		return quote{text, head + "(" + shown + ")"}, true
	}
	return quote{}, false
}

// statusQuote recognises the gRPC exporters' error for a reply that is not
// a success, "rpc error: code = InvalidArgument desc = MESSAGE", and shows
// the message as its length, as a body is: it is the collector's text (its
// exporter's error: the OTLP receiver answers with it) or a proxy's, and
// may quote the records. The code stays.
func statusQuote(e error) (quote, bool) {
	g, ok := e.(interface{ GRPCStatus() *status.Status })
	if !ok || errors.Unwrap(e) != nil {
		return quote{}, false
	}
	msg := g.GRPCStatus().Message()
	text := e.Error()
	head, ok := strings.CutSuffix(text, msg)
	if msg == "" || !ok {
		return quote{}, false
	}
	return quote{text, fmt.Sprintf("%s%d bytes, not shown", head, len(msg))}, true
}

// shownBody is what is shown of the exporters' "body: …": its length.
func shownBody(body string) string {
	reply := strings.TrimPrefix(body, bodyPrefix)
	if reply == emptyBody {
		return body
	}
	return fmt.Sprintf("%s%d bytes, not shown", bodyPrefix, len(reply))
}

// partialQuote recognises the exporters' partial success error, "OTLP
// partial success: MESSAGE (N spans rejected)", and cuts a long message:
// it is the collector's text, which may quote the records.
func partialQuote(e error) (quote, bool) {
	if errors.Unwrap(e) != nil {
		return quote{}, false
	}
	text := e.Error()
	m, tail, ok := splitPartial(text)
	if !ok {
		return quote{}, false
	}
	msg := []rune(m)
	if len(msg) <= partialWidth {
		return quote{text, text}, true // kept, to be escaped
	}
	return quote{text, partialPrefix + string(msg[:partialWidth-1]) + "…" + tail}, true
}
