package sandboxtrace

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/sandboxaudit/sandboxaudit/internal/safetext"
)

// maxKeptRequest is the largest request buffer kept between exports: many
// times an operation whose output reaches DefaultMaxOutputBytes, so the
// usual requests reuse it, while an unusually large one does not pin its
// size for the exporter's life.
const maxKeptRequest = 1 << 20

// maxDirectReply bounds the response body a DirectLogExporter reads.
const maxDirectReply = 64 << 10

// DirectLogExporter posts log records as OTLP/HTTP protobuf to a
// collector's /v1/logs on the exporting goroutine, over one kept-alive
// connection: no goroutine of its own, no per-request timer, no retry
// queue. It is meant to sit behind a SyncLogProcessor, which exports one
// batch at a time and bounds each export (its context ends the request).
// A reply other than 200, a 200 that is not OTLP protobuf, or a partial
// success that rejects records, is an error: the operation fails closed.
// A partial success that rejects none is a warning, reported to the OTel
// error handler (otel.Handle).
// Use it for the lowest latency per sync operation; otlploghttp offers TLS
// settings, proxies, compression and retries that it does not.
type DirectLogExporter struct {
	addr, host, path string
	tls              *tls.Config // nil: plain HTTP

	mu   sync.Mutex // one request at a time on conn
	conn net.Conn
	br   *bufio.Reader
	buf  []byte // the request being written, reused up to maxKeptRequest
	shut bool

	// life ends at Shutdown, which ends an export in flight with it.
	life    context.Context
	endLife context.CancelCauseFunc
}

// errExporterShutdown is why an export fails once Shutdown was called.
var errExporterShutdown = errors.New("log exporter is shut down")

// NewDirectLogExporter returns a DirectLogExporter posting to endpoint, a
// full URL such as http://127.0.0.1:4318/v1/logs (https uses the system
// roots). It connects on the first export.
func NewDirectLogExporter(endpoint string) (*DirectLogExporter, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		// The parser's error quotes the whole endpoint, credentials too.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("log endpoint: %w", err)
	}
	// Named by scheme and host alone: the rest may carry a token.
	name := u.Scheme + "://" + u.Host
	if u.User != nil {
		return nil, fmt.Errorf("log endpoint %s: user info is not supported (it would not be sent)", name)
	}
	e := &DirectLogExporter{host: u.Host, path: u.EscapedPath()}
	e.life, e.endLife = context.WithCancelCause(context.Background())
	if u.RawQuery != "" {
		e.path += "?" + u.RawQuery
	}
	if e.path == "" {
		e.path = "/"
	}
	port := u.Port()
	switch u.Scheme {
	case "http":
		if port == "" {
			port = "80"
		}
	case "https":
		if port == "" {
			port = "443"
		}
		e.tls = &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}
	default:
		return nil, fmt.Errorf("log endpoint %s: scheme must be http or https", name)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("log endpoint %s: no host", name)
	}
	e.addr = net.JoinHostPort(u.Hostname(), port)
	return e, nil
}

// Export posts records in one request and returns once the collector
// answered. ctx ending aborts the request.
func (e *DirectLogExporter) Export(ctx context.Context, records []sdklog.Record) error {
	if len(records) == 0 {
		return nil
	}
	body, err := proto.Marshal(logsRequest(records))
	if err != nil {
		return fmt.Errorf("encoding %d log records: %w", len(records), err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.shut {
		return errExporterShutdown
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer context.AfterFunc(e.life, func() { cancel(errExporterShutdown) })()
	err = e.post(ctx, body, true)
	if err != nil {
		e.closeConn()
	}
	return err
}

// post sends body once and reads the reply. A kept-alive connection the
// collector closed meanwhile fails before any reply byte: the request is
// then sent once more on a new connection. A collector that took the
// request writes its events once (it drops an event id it wrote), so the
// resend adds nothing; only a collector that wrote the request and then
// ended before answering gets an exact copy, which verify reports as a
// duplicate.
func (e *DirectLogExporter) post(ctx context.Context, body []byte, mayRetry bool) error {
	if e.conn != nil && e.idleInput() {
		e.closeConn()
	}
	reused := e.conn != nil
	if !reused {
		if err := e.dial(ctx); err != nil {
			return err
		}
	}
	conn := e.conn // roundTrip may drop e.conn before stop below
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	} else {
		_ = conn.SetDeadline(time.Time{})
	}
	err := e.roundTrip(body)
	stopped := stop()
	if err == nil {
		// The collector answered: an acknowledgement, even if ctx ended
		// as it came.
		if !stopped {
			e.closeConn() // the stale deadline may land on it still
		}
		return nil
	}
	if !stopped || ctx.Err() != nil {
		return errors.Join(context.Cause(ctx), err)
	}
	var stale *staleConnError
	if reused && mayRetry && errors.As(err, &stale) {
		e.closeConn()
		return e.post(ctx, body, false)
	}
	return err
}

// idleInput reports whether the idle connection has input: a reply nobody
// asked for (read as the next request's, it would acknowledge records the
// collector never saw) or the collector's close. Either way the next
// request goes on a new connection. Reads have no deadline here: the last
// request's may have passed, and a passed one hides the socket.
func (e *DirectLogExporter) idleInput() bool {
	if e.br.Buffered() > 0 || e.tlsInput() {
		return true
	}
	_ = e.conn.SetReadDeadline(time.Time{})
	return hasInput(e.conn)
}

// tlsInput reports whether a TLS connection holds records it read from
// the socket along with the last reply: neither e.br nor the socket shows
// them. A read whose deadline has passed returns them without touching
// the socket, and a TLS read's timeout leaves the connection usable.
func (e *DirectLogExporter) tlsInput() bool {
	if _, ok := e.conn.(*tls.Conn); !ok {
		return false
	}
	_ = e.conn.SetReadDeadline(time.Unix(1, 0))
	_, err := e.br.Peek(1)
	return !errors.Is(err, os.ErrDeadlineExceeded)
}

// staleConnError: the connection failed before any byte of the reply.
type staleConnError struct{ err error }

func (s *staleConnError) Error() string { return s.err.Error() }
func (s *staleConnError) Unwrap() error { return s.err }

func (e *DirectLogExporter) dial(ctx context.Context) error {
	d := net.Dialer{KeepAlive: 30 * time.Second}
	var (
		c   net.Conn
		err error
	)
	if e.tls != nil {
		c, err = (&tls.Dialer{NetDialer: &d, Config: e.tls}).DialContext(ctx, "tcp", e.addr)
	} else {
		c, err = d.DialContext(ctx, "tcp", e.addr)
	}
	if err != nil {
		return fmt.Errorf("log endpoint %s: %w", e.addr, err)
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	e.conn = c
	if e.br == nil {
		e.br = bufio.NewReaderSize(c, 4096)
	} else {
		e.br.Reset(c)
	}
	return nil
}

// roundTrip writes one POST and reads its reply on e.conn.
func (e *DirectLogExporter) roundTrip(body []byte) error {
	b := append(e.buf[:0], "POST "...)
	b = append(b, e.path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, e.host...)
	b = append(b, "\r\nUser-Agent: sandboxtrace\r\nContent-Type: application/x-protobuf\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	b = append(b, body...)
	e.buf = b
	if cap(b) > maxKeptRequest {
		e.buf = nil
	}
	if _, err := e.conn.Write(b); err != nil {
		return &staleConnError{fmt.Errorf("log endpoint %s: sending: %w", e.addr, err)}
	}
	if _, err := e.br.Peek(1); err != nil {
		return &staleConnError{fmt.Errorf("log endpoint %s: no reply: %w", e.addr, err)}
	}
	resp, err := http.ReadResponse(e.br, nil)
	if err != nil {
		return fmt.Errorf("log endpoint %s: reading the reply: %w", e.addr, err)
	}
	reply, err := io.ReadAll(io.LimitReader(resp.Body, maxDirectReply+1))
	_ = resp.Body.Close()
	if err != nil {
		return fmt.Errorf("log endpoint %s: reading the reply: %w", e.addr, err)
	}
	if len(reply) > maxDirectReply || resp.Close {
		e.closeConn() // the rest of the reply, or the server, ends it
	}
	return checkReply(resp, reply)
}

// checkReply turns the collector's answer into the export's result.
func checkReply(resp *http.Response, reply []byte) error {
	if resp.StatusCode != http.StatusOK {
		status := shownStatus(resp)
		err := fmt.Errorf("log endpoint: %s", status)
		if msg := refusalMessage(resp, reply); msg != "" {
			err = fmt.Errorf("log endpoint: %s: %s", status, msg)
		}
		// The collector's 400 carries its Status; a proxy's (a plain
		// request at a TLS port, say) is no verdict on the records.
		if resp.StatusCode == http.StatusRequestEntityTooLarge ||
			resp.StatusCode == http.StatusBadRequest && isProtobuf(resp) {
			return &refusedError{err}
		}
		return err
	}
	// An OTLP endpoint answers in the request's encoding; a 200 from
	// anything else (an endpoint set to the wrong service) acknowledges
	// nothing.
	if !isProtobuf(resp) {
		return fmt.Errorf("log endpoint: %s is not an OTLP reply (Content-Type %q)", shownStatus(resp), safetext.EscapeCut(resp.Header.Get("Content-Type"), 60))
	}
	var r collogs.ExportLogsServiceResponse
	if err := proto.Unmarshal(reply, &r); err != nil {
		return fmt.Errorf("log endpoint: reading the reply: %w", err)
	}
	if ps := r.GetPartialSuccess(); ps.GetRejectedLogRecords() > 0 {
		// Quoted as a refusal's Status is: a backend may quote the records.
		return fmt.Errorf("log endpoint rejected %d log records: %s", ps.GetRejectedLogRecords(), safetext.EscapeCut(ps.GetErrorMessage(), partialWidth))
	} else if msg := ps.GetErrorMessage(); msg != "" {
		// A warning: every record was written. Reported as the OTel
		// exporters' partial success is, and quoted as a refusal's.
		otel.Handle(fmt.Errorf("log endpoint: %s%s (0 log records rejected)", partialPrefix, safetext.EscapeCut(msg, partialWidth)))
	}
	return nil
}

// shownStatus is resp's status as an error quotes it: the reason phrase
// is the server's text, of any length. Only a failed export needs it.
func shownStatus(resp *http.Response) string {
	return safetext.EscapeCut(resp.Status, 60)
}

// refusedError is a request refused whole for its content (the
// collector's 400, a 413): none of its records were written, so they can
// go again in smaller requests without making copies.
type refusedError struct{ err error }

func (r *refusedError) Error() string { return r.err.Error() }
func (r *refusedError) Unwrap() error { return r.err }

// refusalMessage is what an error quotes of a refusal: the message of the
// google.rpc.Status a collector answers with, escaped and cut. Any other
// body is left out: a proxy's error page may quote the request, whose
// records the collector has not redacted yet.
func refusalMessage(resp *http.Response, reply []byte) string {
	if !isProtobuf(resp) {
		return ""
	}
	var st spb.Status
	if proto.Unmarshal(reply, &st) != nil {
		return ""
	}
	return safetext.EscapeCut(st.GetMessage(), 200)
}

// isProtobuf reports whether resp's body is declared OTLP protobuf.
func isProtobuf(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == "application/x-protobuf"
}

func (e *DirectLogExporter) closeConn() {
	if e.conn != nil {
		_ = e.conn.Close()
		e.conn = nil
	}
}

// ForceFlush does nothing: Export returns once the collector answered.
func (e *DirectLogExporter) ForceFlush(context.Context) error { return nil }

// Shutdown ends an export in flight (it fails) and closes the connection;
// later exports fail.
func (e *DirectLogExporter) Shutdown(context.Context) error {
	e.endLife(errExporterShutdown)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.shut = true
	e.closeConn()
	return nil
}

// endsWithContext marks an exporter whose Export returns once its ctx
// ends: a SyncLogProcessor may export on the emitter's goroutine.
func (e *DirectLogExporter) endsWithContext() {}
