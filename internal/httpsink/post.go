package httpsink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sandboxaudit/sandboxaudit/internal/secretlog"
)

const (
	contentTypeEvent  = "application/json"
	contentTypeNDJSON = "application/x-ndjson"

	// excerptReadBytes bounds how much of an error response is read;
	// excerptRunes bounds how much of it goes into the error text.
	excerptReadBytes = 1024
	excerptRunes     = 200
	// drainBytes bounds how much of a response is discarded so the
	// connection can be reused.
	drainBytes = 64 << 10
)

// StatusError is a non-2xx answer from the endpoint.
type StatusError struct {
	// Code is the HTTP status code.
	Code int
	// URL is the endpoint without userinfo and query.
	URL string
	// BodyBytes is the length of the response body (what was read of it,
	// at most drainBytes; BodyMore says there was more). The body itself
	// is not kept: an endpoint may echo the request's headers, tokens
	// included.
	BodyBytes int64
	BodyMore  bool
	// Excerpt is the start of the response body, made printable, cut, and
	// with every configured header value redacted, only when
	// Settings.ShowResponseBody is set; "" otherwise.
	Excerpt string
	// RetryAfter is the delay the server asked for (0: none given).
	RetryAfter time.Duration
	// LimitBelowEvents marks a 413 to a single small line: the endpoint's
	// body limit, not the line, is at fault, so the endpoint refuses us
	// (see batchPoster).
	LimitBelowEvents bool
	// WantsTLS marks a 400 whose body says a plain HTTP request reached
	// a TLS port: the endpoint should be https://, so it refuses us
	// whatever we send, as with a 426.
	WantsTLS bool
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("POST %s: HTTP %d %s (response body: %s bytes)", e.URL, e.Code, http.StatusText(e.Code), e.bodySize())
	if e.Excerpt != "" {
		msg += ": " + strconv.Quote(e.Excerpt)
	}
	if e.WantsTLS {
		msg += ", which says the endpoint is a TLS port: write it https://; the lines are kept"
	}
	if e.LimitBelowEvents {
		msg += ", to a single small line: the endpoint's body limit is below any event's, so the line is kept"
	}
	return msg
}

// class is what the answer means for the lines sent.
func (e *StatusError) class() statusClass {
	if e.LimitBelowEvents || e.WantsTLS {
		return classEndpoint
	}
	return classify(e.Code)
}

// bodySize is BodyBytes, as a lower bound when the body was longer.
func (e *StatusError) bodySize() string {
	n := strconv.FormatInt(e.BodyBytes, 10)
	if e.BodyMore {
		return "more than " + n
	}
	return n
}

// Retryable reports whether the same request may succeed later, by itself
// or once an operator fixes the endpoint's configuration: every answer but
// a content-level 4xx (see Permanent).
func (e *StatusError) Retryable() bool { return e.class() != classContent }

// Permanent reports whether the endpoint refused the request's content:
// the same lines would fail forever, so they are dropped (visibly).
func (e *StatusError) Permanent() bool { return e.class() == classContent }

// EndpointRefused reports whether the endpoint (or a proxy in front of it)
// refuses us whatever we send: credentials, path, method or proxy are
// wrong. The lines are not at fault and are kept; retrying at once would
// not help, so the live path spools them without retries.
func (e *StatusError) EndpointRefused() bool { return e.class() == classEndpoint }

// statusClass says what a non-2xx answer means for the lines sent.
type statusClass int

const (
	// classRetry: 429, 5xx, or a 3xx we did not follow (see
	// SafeRedirects). The endpoint may take the same request shortly:
	// retried with backoff, then spooled.
	classRetry statusClass = iota
	// classEndpoint: the endpoint refuses every request until its
	// configuration (or ours) changes. Spooled at once and replayed with
	// backoff; never dropped, so an expired token or a misrouted proxy
	// cannot wipe a spool after an outage.
	classEndpoint
	// classContent: every other 4xx (400, 409, 413, 422, …).
	// This content would fail forever: dropped visibly, so one bad batch
	// cannot block the spool behind it.
	classContent
)

// classify sorts a non-2xx status code. It is the one list of the 4xx
// codes that mean the endpoint refuses us. A WAF that answers 403 to one
// event's content is indistinguishable from a revoked token; keeping is
// the safe side: the spool waits, an ERROR log names the status each
// round, and the operator can inspect the spool.
func classify(code int) statusClass {
	switch code {
	case http.StatusTooManyRequests:
		return classRetry
	case
		// credentials missing, expired or wrong
		http.StatusUnauthorized, http.StatusProxyAuthRequired,
		// credentials lack the permission
		http.StatusForbidden,
		// a wrong path or a route that moved (a misrouted proxy answers these too)
		http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusGone,
		// the server gave up waiting, which says nothing about the content
		http.StatusRequestTimeout,
		// a proxy or load balancer routed us to the wrong server
		http.StatusMisdirectedRequest,
		// the server wants another protocol (TLS)
		http.StatusUpgradeRequired,
		// the request's shape: every request carries the same URL, headers,
		// Content-Type (format) and Content-Encoding (compression), so these
		// refuse the configuration, never one event
		http.StatusNotAcceptable, http.StatusLengthRequired, http.StatusRequestURITooLong,
		http.StatusUnsupportedMediaType, http.StatusRequestHeaderFieldsTooLarge:
		return classEndpoint
	}
	if code >= 400 && code <= 499 {
		return classContent
	}
	return classRetry
}

// SafeRedirects returns a copy of c that follows a redirect only when it
// keeps the POST and its body (307, 308) and stays on the same host. Go
// turns a POST into a body-less GET on 301/302/303, whose 2xx would be
// taken for an acknowledgement of lines never sent; and the auth round
// tripper would hand the token to whatever host a redirect names.
func SafeRedirects(c *http.Client) *http.Client {
	cc := *c
	prev := c.CheckRedirect
	cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		first := via[0].URL
		if req.Method != http.MethodPost || req.URL.Host != first.Host ||
			(first.Scheme == "https" && req.URL.Scheme != "https") {
			return http.ErrUseLastResponse
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if prev != nil {
			return prev(req, via)
		}
		return nil
	}
	return &cc
}

// poster sends one request body to the endpoint.
type poster struct {
	client      *http.Client
	endpoint    string // as configured, may hold credentials
	safeURL     string // for messages
	contentType string
	stripNL     bool // event format: the body is the line without "\n"
	// secrets (Secrets of the endpoint and Settings.RedactValues) are
	// what a transport error, and a response body shown when showBody is
	// set, must not show.
	secrets  []string
	showBody bool
	inFlight *requests
}

func newPoster(set Settings) poster {
	u, _ := url.Parse(set.Endpoint) // validated in withDefaults
	p := poster{client: SafeRedirects(set.Client), endpoint: set.Endpoint, safeURL: safeURL(u),
		secrets: secretlog.Secrets(set.Endpoint, set.RedactValues), showBody: set.ShowResponseBody,
		inFlight: newRequests()}
	if set.Format == FormatEvent {
		p.contentType, p.stripNL = contentTypeEvent, true
	} else {
		p.contentType = contentTypeNDJSON
	}
	return p
}

// post sends body (whole lines, each ending in "\n") once. It returns nil
// on 2xx, a *StatusError for any other status, and a transport error
// (without the URL's credentials) otherwise.
func (p poster) post(ctx context.Context, body []byte) error {
	if p.stripNL {
		body = bytes.TrimSuffix(body, []byte{'\n'})
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.endpoint, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("build request for %s: %w", p.safeURL, errors.Unwrap(err))
	}
	req.Header.Set("Content-Type", p.contentType)
	p.inFlight.begin()
	defer p.inFlight.end()
	resp, err := p.client.Do(req)
	if err != nil {
		// *url.Error prints the full URL, credentials included; keep
		// only the cause, which still answers Timeout() and errors.Is.
		return fmt.Errorf("POST %s: %w", p.safeURL, secretlog.TransportError(err, p.secrets))
	}
	defer func() {
		_, _ = io.CopyN(io.Discard, resp.Body, drainBytes)
		_ = resp.Body.Close()
	}()
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		// A 2xx whose body is cut off (connection reset) is not trusted
		// as an acknowledgement: resending risks a duplicate, which
		// event_id makes harmless; trusting it risks a loss.
		if _, err := io.CopyN(io.Discard, resp.Body, drainBytes); err != nil && !errors.Is(err, io.EOF) && !undecodable(err) {
			return fmt.Errorf("POST %s: HTTP %d but the response was cut off: %w", p.safeURL, resp.StatusCode, secretlog.TransportError(err, p.secrets))
		}
		return nil
	}
	se := &StatusError{Code: resp.StatusCode, URL: p.safeURL}
	if se.Retryable() {
		se.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	var head []byte
	head, se.BodyBytes, se.BodyMore, se.Excerpt = p.readErrorBody(resp)
	se.WantsTLS = se.Code == http.StatusBadRequest && resp.Request.URL.Scheme == "http" && saysWantsTLS(head)
	return se
}

// wantsTLSPhrases are how servers answer a plain HTTP request on a TLS
// port, in lower case: Go's net/http, nginx, Apache.
var wantsTLSPhrases = []string{
	"http request to an https server",
	"plain http request was sent to https port",
	"speaking plain http to an ssl-enabled server port",
}

// saysWantsTLS reports whether an error body says the request should have
// been sent over TLS.
func saysWantsTLS(head []byte) bool {
	lower := strings.ToLower(string(head))
	for _, p := range wantsTLSPhrases {
		if strings.Contains(lower, p) {
			return true
		}
	}
	return false
}

// readErrorBody returns the start of an error response's body, measures
// the body and, only when bodies are shown, returns its excerpt with every
// secret and every header value the request carried redacted. The rest is
// discarded.
func (p poster) readErrorBody(resp *http.Response) (head []byte, n int64, more bool, shown string) {
	head, _ = io.ReadAll(io.LimitReader(resp.Body, excerptReadBytes))
	rest, _ := io.CopyN(io.Discard, resp.Body, drainBytes)
	n = int64(len(head)) + rest
	more = rest == drainBytes
	if p.showBody {
		// Checked before the excerpt is cut: a cut through a secret in a
		// mixed encoding would hide it from the check, not from a reader.
		secrets := secretlog.WithSent(p.secrets, resp.Request)
		red := secretlog.Redact(head, secrets)
		shown = excerpt(red)
		if secretlog.Echoes(red, secrets) {
			shown = secretlog.Withheld
		}
	}
	return head, n, more, shown
}

// parseRetryAfter reads delay-seconds or an HTTP-date (RFC 9110 §10.2.3);
// anything else, or a date in the past, is 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		// Cap absurd values before the multiplication can overflow.
		const maxSecs = int64(365 * 24 * 3600)
		return time.Duration(min(secs, maxSecs)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// excerpt turns the start of a response body into one printable line:
// invalid UTF-8 and control characters become spaces or U+FFFD, runs of
// spaces collapse, and the text is cut at excerptRunes.
func excerpt(b []byte) string {
	var sb strings.Builder
	n := 0
	space := false
	for len(b) > 0 && n < excerptRunes {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = true
			continue
		}
		if space && sb.Len() > 0 {
			sb.WriteByte(' ')
			n++
		}
		space = false
		sb.WriteRune(r) // RuneError for invalid bytes: U+FFFD
		n++
	}
	if len(bytes.TrimSpace(b)) > 0 {
		sb.WriteString("…")
	}
	return sb.String()
}
