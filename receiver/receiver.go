package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/idwindow"
	"github.com/sandboxaudit/sandboxaudit/internal/pairing"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
	"github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"
	"github.com/sandboxaudit/sandboxaudit/receiver/internal/metadata"
)

// sandboxReceiver is one HTTP server feeding the logs and/or traces
// pipelines the receiver ID is listed in.
type sandboxReceiver struct {
	cfg      *Config
	set      receiver.Settings
	obsrep   *receiverhelper.ObsReport
	tel      *metadata.TelemetryBuilder
	accepted map[string]metric.AddOption // see acceptedAttrs
	mapper   *spanmap.Mapper
	dedupe   *idwindow.Window[uuid.UUID] // delivered event ids; nil when dedupe is disabled
	pairs    *pairing.Pairer             // nil until Start; only with a traces consumer
	admit    *admission.Controller
	decoding *admission.DecodeGate // one large body decoding at a time

	nextLogs   consumer.Logs
	nextTraces consumer.Traces

	// shutdownGrace: see stopServer; inflight counts the handlers running.
	shutdownGrace time.Duration
	// bodyGrace: how long a body may take before min_body_rate applies.
	bodyGrace time.Duration
	inflight  admission.Inflight

	startOnce sync.Once
	stopOnce  sync.Once
	server    *http.Server
	addr      net.Addr
	stop      chan struct{}
	// sweepCtx is canceled at shutdown so that a blocked traces pipeline
	// cannot hold the sweeper (and Shutdown) forever.
	sweepCtx    context.Context
	sweepCancel context.CancelFunc
	wg          sync.WaitGroup
}

var (
	_ receiver.Logs   = (*sandboxReceiver)(nil)
	_ receiver.Traces = (*sandboxReceiver)(nil)
)

func newSandboxReceiver(cfg *Config, set receiver.Settings) (*sandboxReceiver, error) {
	obsrep, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
		ReceiverID:             set.ID,
		Transport:              "http",
		ReceiverCreateSettings: set,
	})
	if err != nil {
		return nil, fmt.Errorf("sandboxaudit receiver %s: creating obsreport: %w", set.ID, err)
	}
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, fmt.Errorf("sandboxaudit receiver %s: creating telemetry: %w", set.ID, err)
	}
	r := &sandboxReceiver{
		cfg:      cfg,
		set:      set,
		obsrep:   obsrep,
		tel:      tel,
		accepted: acceptedAttrs(),
		mapper:   spanmap.NewMapper(0),
		stop:     make(chan struct{}),
		admit: admission.New(admission.Settings{
			MaxInflightBytes: cfg.MaxInflightBytes,
			MaxBodyBytes:     cfg.maxBodySize(),
			MinBodyRate:      cfg.MinBodyRate,
			ReadTimeout:      cfg.ServerConfig.ReadTimeout,
			AnswerBy:         cfg.answerBy(),

			SmallBodyBytes:     cfg.SmallBodyBytes,
			SmallInflightBytes: cfg.SmallBodyInflightBytes,
			SmallBodyTimeout:   cfg.SmallBodyTimeout,
			Snappy:             cfg.snappyEnabled(),
		}),
		decoding: admission.NewDecodeGate(),

		shutdownGrace: defaultShutdownGrace,
		bodyGrace:     admission.DefaultBodyGrace,
	}
	if cfg.Dedupe.Enabled {
		w, err := idwindow.New[uuid.UUID](cfg.Dedupe.Window)
		if err != nil {
			return nil, fmt.Errorf("dedupe::window: %w", err)
		}
		r.dedupe = w
	}
	return r, nil
}

func (r *sandboxReceiver) registerLogsConsumer(next consumer.Logs)     { r.nextLogs = next }
func (r *sandboxReceiver) registerTracesConsumer(next consumer.Traces) { r.nextTraces = next }

// Start starts the HTTP server (once, however many pipelines share the
// receiver) and, in a traces pipeline, the pairing sweeper.
func (r *sandboxReceiver) Start(ctx context.Context, host component.Host) error {
	var err error
	r.startOnce.Do(func() { err = r.start(ctx, host) })
	return err
}

func (r *sandboxReceiver) start(ctx context.Context, host component.Host) error {
	if r.nextTraces != nil {
		r.pairs = newPairer(r.cfg)
		if err := r.registerPendingGauge(); err != nil {
			return fmt.Errorf("sandboxaudit receiver %s: registering pending gauge: %w", r.set.ID, err)
		}
	}
	if err := r.newServer(ctx, host); err != nil {
		return err
	}
	// The collector names the component; the error names the key.
	ln, shared, err := r.listen(ctx)
	if err != nil {
		return err
	}
	r.server.ConnState = shared.ConnState
	r.addr = ln.Addr()
	r.set.Logger.Info("Starting HTTP server",
		zap.String("endpoint", ln.Addr().String()),
		zap.String("traces_path", r.cfg.TracesPath),
		zap.String("events_path", r.cfg.EventsPath))

	r.wg.Go(func() {
		if err := r.server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			componentstatus.ReportStatus(host, componentstatus.NewFatalErrorEvent(err))
		}
	})
	if r.pairs != nil {
		r.sweepCtx, r.sweepCancel = context.WithCancel(context.WithoutCancel(ctx))
		r.wg.Go(r.sweepLoop)
	}
	return nil
}

// newServer makes r.server, serving both paths, with its decoders and
// bounds; it does not listen yet.
func (r *sandboxReceiver) newServer(ctx context.Context, host component.Host) error {
	mux := http.NewServeMux()
	mux.Handle(r.cfg.TracesPath, r.handler(endpointTraces, r.serveTraces))
	mux.Handle(r.cfg.EventsPath, r.handler(endpointEvents, r.serveEvents))

	var err error
	r.server, err = r.cfg.ServerConfig.ToServer(ctx, host.GetExtensions(), r.set.TelemetrySettings, mux, r.serverOptions()...)
	if err != nil {
		return fmt.Errorf("creating HTTP server: %w", err)
	}
	r.server.Handler = r.outermost(r.server.Handler)
	r.server.ErrorLog = serverErrorLog(r.set.Logger)
	// confighttp leaves net/http's 1 MiB header bound and no connection
	// limit: with both, memory is bounded whatever clients withhold.
	r.server.MaxHeaderBytes = r.cfg.MaxRequestHeaderBytes
	return nil
}

// serverOptions are confighttp's options for the server: its error
// handler and the decoders admission paces.
func (r *sandboxReceiver) serverOptions() []confighttp.ToServerOption {
	opts := []confighttp.ToServerOption{confighttp.WithErrorHandler(r.errorHandler)}
	if r.cfg.snappyEnabled() {
		// A snappy block is passed on compressed, for admission to read
		// within the budget and inflate: confighttp's decoder reads it
		// whole, unpaced, before any budget sees it.
		opts = append(opts, confighttp.WithDecoder(admission.EncodingSnappy, passCompressed))
	}
	if r.cfg.decodes("zstd") {
		// Unpooled, its windows reserved by admission: confighttp's
		// pooled decoders keep theirs between requests, unreserved.
		opts = append(opts, confighttp.WithDecoder("zstd", admission.Zstd(r.cfg.maxBodySize())))
	}
	for _, enc := range []string{"deflate", "zlib"} {
		// A decoder given here is taken whatever compression_algorithms
		// says: only the codings it lists get one.
		if r.cfg.decodes(enc) {
			opts = append(opts, confighttp.WithDecoder(enc, admission.Deflate))
		}
	}
	return opts
}

// listen opens the server's listener as confighttp's ToListener does, with
// the connections shared between client addresses beneath TLS, so that the
// server still sees TLS connections. HTTP/2 is not offered: its streams
// would let one connection hold hundreds of requests, and the bounds on
// connections, header bytes and unread bodies assume one at a time.
func (r *sandboxReceiver) listen(ctx context.Context) (net.Listener, *admission.ConnListener, error) {
	sc := &r.cfg.ServerConfig
	tlsSettings := sc.TLS.Get()
	var tlsCfg *tls.Config
	if tlsSettings != nil {
		if err := fsutil.CheckReadable(tlsFiles(tlsSettings)); err != nil {
			return nil, nil, err
		}
		var err error
		if tlsCfg, err = tlsSettings.LoadTLSConfig(ctx); err != nil {
			return nil, nil, fmt.Errorf("tls: %w", err)
		}
	}
	raw, err := sc.NetAddr.Listen(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("endpoint: %w", err)
	}
	shared := admission.NewConnListener(raw, r.cfg.MaxConnections, r.connEvicted)
	if tlsCfg == nil {
		return shared, shared, nil
	}
	tlsCfg.NextProtos = []string{"http/1.1"}
	return tls.NewListener(shared, tlsCfg), shared, nil
}

// Shutdown stops the server, waits for requests in flight, then emits the
// start events still waiting for their finish as incomplete spans.
func (r *sandboxReceiver) Shutdown(ctx context.Context) error {
	var err error
	r.stopOnce.Do(func() { err = r.shutdown(ctx) })
	return err
}

func (r *sandboxReceiver) shutdown(ctx context.Context) error {
	var errs error
	if r.server != nil {
		errs = r.stopServer(ctx)
	}
	close(r.stop)
	if r.sweepCancel != nil {
		r.sweepCancel()
	}
	r.wg.Wait()
	if r.pairs != nil {
		r.flushPending(ctx)
	}
	r.tel.Shutdown()
	return errs
}

// stopServer lets the requests in flight finish for up to shutdownGrace,
// then closes their connections and waits for their handlers, so that a
// client trickling its body cannot hold the collector's shutdown, and the
// exporters' own shutdown work behind it, for its read_timeout. A request
// cut so was not answered, and its client retries it.
func (r *sandboxReceiver) stopServer(ctx context.Context) error {
	graceCtx, cancel := context.WithTimeout(ctx, r.shutdownGrace)
	defer cancel()
	if err := r.server.Shutdown(graceCtx); err == nil {
		return nil
	}
	closeErr := r.server.Close()
	select {
	case <-r.inflight.Idle():
		return closeErr
	case <-ctx.Done():
		return errors.Join(closeErr, ctx.Err())
	}
}

// sweepLoop emits timed-out starts as incomplete spans until Shutdown.
func (r *sandboxReceiver) sweepLoop() {
	t := time.NewTicker(r.cfg.sweepInterval())
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.sweep(r.sweepCtx)
		}
	}
}

// outermost wraps confighttp's handler chain. It counts the request in
// flight from its first step, so that shutdown waits for one still in the
// auth or decompression middleware too; it lowercases the
// Content-Encoding header, its lines joined, before confighttp's
// decompressor looks it up (content codings are case-insensitive, RFC
// 9110); it closes the connection after a chunked request; and it paces
// the body.
func (r *sandboxReceiver) outermost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.inflight.Add(1)
		defer r.inflight.Add(-1)
		if req.RequestURI == "*" {
			r.refuseAsterisk(w, req)
			return
		}
		if req.ContentLength > r.cfg.maxBodySize() {
			// Before any of the body is read, and before a decompressor
			// hides the length: a client sending Expect: 100-continue
			// gets its 413 instead of being asked for the body.
			r.errorHandler(w, req, "request body too large (max_request_body_size)", http.StatusRequestEntityTooLarge)
			return
		}
		if len(req.TransferEncoding) > 0 {
			// net/http drops a Content-Length sent beside
			// Transfer-Encoding before any handler sees it, and would
			// read on: closed after the answer (RFC 9112, 6.3), the
			// bytes a proxy in front counted otherwise are never taken
			// for a request of their own.
			w.Header().Set("Connection", "close")
		}
		if ce := contentEncoding(req); ce != "" {
			if folded := strings.ToLower(strings.TrimSpace(ce)); folded != ce || len(req.Header["Content-Encoding"]) > 1 {
				req.Header.Set("Content-Encoding", folded)
			}
			// Beneath the decoder: its errors then name the coding.
			req = admission.TrackEncoding(req)
		}
		// Paced here, on the bytes as they arrive: a decompressor reads
		// its header before the handler runs.
		next.ServeHTTP(w, r.admit.Pace(w, req, r.bodyGrace))
	})
}

// contentEncoding is the request's Content-Encoding, its lines joined
// into one list (RFC 9110, 5.3): confighttp looks at the first line alone.
func contentEncoding(req *http.Request) string {
	if vs := req.Header["Content-Encoding"]; len(vs) > 1 {
		return strings.Join(vs, ", ")
	}
	return req.Header.Get("Content-Encoding")
}

// passCompressed is a content decoder that leaves the body, and its
// Content-Encoding header, as they are.
func passCompressed(io.ReadCloser) (io.ReadCloser, error) { return nil, nil }

// errorHandler answers requests confighttp refuses before they reach a
// handler (an unknown Content-Encoding, a failed authentication).
func (r *sandboxReceiver) errorHandler(w http.ResponseWriter, req *http.Request, msg string, status int) {
	endpoint := endpointOf(r.cfg, req.URL.Path)
	status, outcome, msg := refusal(req, status, msg)
	rp := textReply(status, outcome, msg)
	if endpoint == endpointTraces {
		// OTLP/HTTP answers every error with a google.rpc.Status.
		rp = otlpStatusReply(status, outcome, mediaType(req), msg)
	}
	rp.write(w)
	r.recordRequest(req.Context(), endpoint, rp)
}

// refusal is the status, outcome and message to answer confighttp's
// refusal of req with.
func refusal(req *http.Request, status int, msg string) (int, string, string) {
	switch {
	case status == http.StatusUnauthorized:
		return status, outcomeUnauthenticated, "unauthenticated"
	case status == http.StatusRequestEntityTooLarge:
		return status, outcomeTooLarge, msg
	case status != http.StatusBadRequest:
		return status, outcomeDecompressFailure, msg
	case strings.HasPrefix(msg, "unsupported Content-Encoding"):
		// confighttp's message quotes the header; RFC 9110 answers an
		// unknown content coding with a 415.
		return http.StatusUnsupportedMediaType, outcomeUnsupportedType,
			"unsupported Content-Encoding (compression_algorithms lists the accepted ones)"
	case msg == "http: request body too large":
		// A decoder that read past max_request_body_size: a 413, as the
		// handlers answer it. The whole message only: others quote the
		// client's header.
		return http.StatusRequestEntityTooLarge, outcomeTooLarge, "request body too large (max_request_body_size)"
	case strings.HasSuffix(msg, os.ErrDeadlineExceeded.Error()):
		// A decoder's header that did not arrive in time: the pacing cut
		// it, and the message names the connection's addresses.
		return readErrorReply(os.ErrDeadlineExceeded)
	}
	// A decoder that could not start: its message ("unexpected EOF") does
	// not say what failed.
	return readErrorReply(admission.DecodeFailure(req, errors.New(msg)))
}
