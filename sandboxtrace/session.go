package sandboxtrace

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// DefaultMaxOutputBytes bounds each captured exec stream when output capture
// is enabled without an explicit bound.
const DefaultMaxOutputBytes = 64 << 10

// Option configures a Session.
type Option func(*config)

type config struct {
	sessionID      uuid.UUID
	backend        string
	captureOutput  bool
	maxOutputBytes int
	noGenAI        bool

	loggerProvider log.LoggerProvider
	logExporter    sdklog.Exporter
	delivery       Delivery
	syncTimeout    time.Duration
}

// WithSessionID sets the session id. Without it (or with uuid.Nil) a random
// (version 4) id is generated, as the Python SDK does. Each Session numbers
// its events from 1: two Sessions with one id reuse seqs, so keep one
// Session per sandbox session.
func WithSessionID(id uuid.UUID) Option {
	return func(c *config) { c.sessionID = id }
}

// WithBackend sets the optional sandbox.backend attribute (the Python SDK
// uses the backend module name, e.g. "docker").
func WithBackend(name string) Option {
	return func(c *config) { c.backend = validText(name) }
}

// MaxOutputBytes is the most WithOutputCapture keeps of each exec stream.
// Both streams at this bound, base64-encoded on the span, still fit the
// collector's default 20 MiB OTLP/HTTP request with the rest of the span: a
// larger span is refused whole, and the finish event it carries is lost.
const MaxOutputBytes = 4 << 20

// WithOutputCapture records raw exec stdout/stderr on the span, each stream
// cut to maxBytes (<= 0: DefaultMaxOutputBytes; at most MaxOutputBytes).
// Output is off by default because it is often large and may hold secrets;
// the collector's payload policy decides later whether it reaches an audit
// line.
func WithOutputCapture(maxBytes int) Option {
	return func(c *config) {
		c.captureOutput = true
		if maxBytes <= 0 {
			maxBytes = DefaultMaxOutputBytes
		}
		c.maxOutputBytes = min(maxBytes, MaxOutputBytes)
	}
}

// Session records the operations of one sandbox session as spans. It is safe
// for concurrent use.
//
// One session is one trace: NewSession starts a root span named
// [semconv.SessionSpanName] (a child of the span in NewSession's ctx, if
// any), which the collector mapping skips, and every operation span belongs
// to that trace, so a trace-id load balancer routes a whole session to one
// collector. An operation whose ctx already holds a span of the session's
// trace (for example the ctx returned by Start) nests under that span; a span
// of another trace in an operation's ctx becomes a link instead of the
// parent, so it cannot split the session.
type Session struct {
	tp      trace.TracerProvider
	tracer  trace.Tracer
	id      uuid.UUID
	idText  string
	backend string

	captureOutput  bool
	maxOutputBytes int
	genAI          bool

	root    trace.Span
	endOnce sync.Once
	// unsampled reports, once, operation spans the provider drops.
	unsampled sync.Once
	// noopProvider: tp records nothing by design (isNoopProvider).
	noopProvider bool
	// providerDown reports, once, spans ended after tp shut down.
	providerDown sync.Once
	// attrsDropped and attrsCut report, once each, attributes tp's span
	// limits dropped or cut.
	attrsDropped, attrsCut sync.Once
	// keptChars is the most characters of a value a check found intact:
	// the value length limit counts characters, so it is at least that, and
	// a value of no more bytes cannot have been cut.
	keptChars atomic.Int64

	// logs emits the write-ahead start records and, when the session
	// built it, is the pipeline it must shut down.
	logs        logPipeline
	logProc     atomic.Pointer[LogProcessor] // counts best-effort records lost after shutdown
	delivery    Delivery
	syncTimeout time.Duration

	// open counts the operations started and not finished, which the
	// first Shutdown reports.
	open       atomic.Int64
	openReport sync.Once

	// mu makes each event's seq and timestamp one step, so seq order and
	// time order agree even when operations run concurrently.
	mu      sync.Mutex
	lastSeq int64
}

// NewSession starts a session: it creates the session's root span with tp's
// tracer for ScopeName. Call End when the session is over.
func NewSession(ctx context.Context, tp trace.TracerProvider, opts ...Option) (*Session, error) {
	if isNil(tp) {
		return nil, errors.New("sandboxtrace: NewSession needs a TracerProvider, got nil")
	}
	ctx = orBackground(ctx)
	var cfg config
	for _, opt := range opts {
		opt(&cfg)
	}
	if cfg.sessionID == uuid.Nil {
		cfg.sessionID = uuid.New()
	}
	pipeline, err := cfg.logPipeline()
	if err != nil {
		return nil, err
	}
	s := &Session{
		logs:           pipeline,
		delivery:       cfg.delivery,
		syncTimeout:    cfg.syncTimeout,
		tp:             tp,
		tracer:         tp.Tracer(ScopeName),
		noopProvider:   isNoopProvider(tp),
		id:             cfg.sessionID,
		idText:         cfg.sessionID.String(),
		backend:        cfg.backend,
		captureOutput:  cfg.captureOutput,
		maxOutputBytes: cfg.maxOutputBytes,
		genAI:          !cfg.noGenAI,
	}
	if lp, ok := pipeline.processor.(*LogProcessor); ok {
		s.logProc.Store(lp)
	}
	attrs := []attribute.KeyValue{attribute.String(semconv.AttrSessionID, s.idText)}
	if s.backend != "" {
		attrs = append(attrs, attribute.String(semconv.AttrBackend, s.backend))
	}
	_, s.root = s.tracer.Start(ctx, semconv.SessionSpanName,
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attrs...))
	return s, nil
}

// ID returns the session id.
func (s *Session) ID() uuid.UUID { return s.id }

// TraceID returns the id of the session's trace (all zero when the
// TracerProvider does not record, e.g. a no-op provider).
func (s *Session) TraceID() trace.TraceID { return s.root.SpanContext().TraceID() }

// Context returns ctx carrying the session's root span, for callers that want
// their own spans inside the session's trace.
func (s *Session) Context(ctx context.Context) context.Context {
	return trace.ContextWithSpan(orBackground(ctx), s.root)
}

// End ends the session's root span. Operations recorded afterwards still
// belong to the session's trace. Calling End again does nothing.
func (s *Session) End() {
	s.endOnce.Do(func() { s.root.End() })
}

// Shutdown ends the session (see End), reports operations started and not
// finished to the OTel error handler, and, when the session built its own
// log pipeline (WithLogExporter), exports the queued start records and shuts
// that pipeline down. If ctx ends first, operations still waiting to queue
// their records are let go (the records are lost, counted) and the pipeline
// is shut down all the same. The TracerProvider and a LoggerProvider given
// with WithLoggerProvider stay the caller's to shut down.
func (s *Session) Shutdown(ctx context.Context) error {
	ctx = orBackground(ctx)
	s.End()
	s.reportOpen()
	if s.logs.provider == nil {
		return nil
	}
	err := s.logs.provider.Shutdown(ctx)
	if err != nil {
		// A provider whose ctx ends while it waits for emits in progress
		// never shuts its processors down; the worker and the exporter's
		// connections would outlive the session. Processors take a spent
		// ctx as "be quick", and a second Shutdown is a no-op.
		err = errors.Join(err, s.logs.processor.Shutdown(ctx))
		return fmt.Errorf("sandboxtrace: shut down the start-event log pipeline: %w", err)
	}
	return nil
}

// isNil reports whether v is nil or holds a nil pointer, map, func or
// chan: a provider variable never set, whose methods would panic at first
// use.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Func, reflect.Chan:
		return rv.IsNil()
	}
	return false
}

// reportOpen reports the operations started and not finished: their spans
// never end, so their finish events are never recorded, and without a log
// pipeline their start events neither.
func (s *Session) reportOpen() {
	s.openReport.Do(func() {
		if n := s.open.Load(); n > 0 {
			otel.Handle(fmt.Errorf("sandboxtrace: session %s: %s not finished at Shutdown: their finish events "+
				"are not recorded until Op.Finish (their start events too, without a log pipeline)",
				s.idText, plural.Count(n, "operation")))
		}
	})
}

// orBackground is ctx, or context.Background for a nil ctx, as the OTel SDK
// takes one: a caller's nil must not panic in the middle of an operation.
func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

// reportUnsampled reports that the provider does not sample the session's
// operation spans: they are never exported, so their finish events (all
// their events, without a log pipeline) are lost.
func (s *Session) reportUnsampled() {
	s.unsampled.Do(func() {
		otel.Handle(fmt.Errorf("sandboxtrace: session %s: operation spans are not sampled, so their finish "+
			"events are lost: sample every span (sdktrace.AlwaysSample)", s.idText))
	})
}

// isNoopProvider reports whether tp is a no-op provider by design: the noop
// package's, or the deprecated trace.NewNoopTracerProvider's (its type is
// unexported; its value is the only one of it, so it is compared). Another
// provider that records nothing (shut down, or one of a third party that
// hands out no-op tracers) cannot be told from it by its spans: both carry
// no span context, or the caller's.
func isNoopProvider(tp trace.TracerProvider) bool {
	switch tp.(type) {
	case noop.TracerProvider, *noop.TracerProvider:
		return true
	}
	//lint:ignore SA1019 recognizes the deprecated provider callers still pass
	return tp == trace.NewNoopTracerProvider() //nolint:staticcheck // the same reason, for golangci-lint
}

// checkProviderUp reports, once, that the TracerProvider is shut down: the
// SDK drops spans ended afterwards without a word, and with them the finish
// events (all the events, without a log pipeline) of operations ending now.
// A shut-down SDK provider hands out no-op tracers.
func (s *Session) checkProviderUp() {
	if _, down := s.tp.Tracer(ScopeName).(noop.Tracer); !down {
		return
	}
	s.providerDown.Do(func() {
		otel.Handle(fmt.Errorf("sandboxtrace: session %s: the TracerProvider is shut down, so operation spans "+
			"ending now are dropped with their finish events: shut it down after the session", s.idText))
	})
}

// checkSpanKept reports, once, that span will not be exported, and with it
// the finish event it carries: its provider shut down (see checkProviderUp),
// or records no spans at all (shut down before the session began, a no-op
// provider, the global one before it is set). A no-op provider without a
// log pipeline is tracing turned off on purpose: nothing is half-recorded.
// A no-op provider's span carries the caller's span context when there is
// one, so its provider, not the span, says it records nothing.
func (s *Session) checkSpanKept(span trace.Span) {
	switch {
	case s.noopProvider && s.logs.logger == nil:
		return
	case !s.noopProvider && span.SpanContext().IsValid():
		s.checkProviderUp()
		return
	}
	s.providerDown.Do(func() {
		otel.Handle(fmt.Errorf("sandboxtrace: session %s: the TracerProvider records no spans (it is shut down, "+
			"or a no-op provider), so operation spans are dropped with their finish events: give the session "+
			"a recording provider and shut it down after the session", s.idText))
	})
}

// checkAttributesKept reports, once each, that the SDK's span limits lost
// attributes of an operation span without a word. A count limit drops the
// newest keys, the finish's: the collector then writes the start data as
// the finish data, or a failure without its error fields. A value length
// limit cuts long values (set: the finish's, start: the start data): a cut
// message is written cut, a cut data JSON makes the span unreadable. The
// span's attributes are read only when a value is longer than any found
// intact before.
func (s *Session) checkAttributesKept(span trace.Span, set []attribute.KeyValue, start []byte) {
	ro, ok := span.(sdktrace.ReadOnlySpan)
	if !ok {
		return
	}
	dropped := ro.DroppedAttributes()
	if dropped > 0 {
		s.attrsDropped.Do(func() {
			otel.Handle(fmt.Errorf("sandboxtrace: session %s: the span attribute count limit dropped %d attributes "+
				"of a %s span, so its events are written wrong: remove the TracerProvider's attribute count limit",
				s.idText, dropped, ro.Name()))
		})
	}
	if int64(longestValue(set, start)) <= s.keptChars.Load() {
		return
	}
	if key := cutAttribute(ro.Attributes(), set, len(start)); key != "" {
		s.attrsCut.Do(func() {
			otel.Handle(fmt.Errorf("sandboxtrace: session %s: the span attribute value length limit cut %s of a %s "+
				"span, so its events are written wrong or lost: remove the TracerProvider's attribute value length limit",
				s.idText, key, ro.Name()))
		})
		return
	}
	if dropped == 0 { // a dropped value was not held, so not found intact
		s.noteKept(set, start)
	}
}

// longestValue is the byte length of the longest string in set or start.
func longestValue(set []attribute.KeyValue, start []byte) int {
	n := len(start)
	for _, kv := range set {
		if kv.Value.Type() == attribute.STRING {
			n = max(n, len(kv.Value.AsString()))
		}
	}
	return n
}

// noteKept raises keptChars to the most characters of a string in set or
// start, all found intact.
func (s *Session) noteKept(set []attribute.KeyValue, start []byte) {
	n := int64(utf8.RuneCount(start))
	for _, kv := range set {
		if kv.Value.Type() == attribute.STRING {
			n = max(n, int64(utf8.RuneCountInString(kv.Value.AsString())))
		}
	}
	for {
		old := s.keptChars.Load()
		if n <= old || s.keptChars.CompareAndSwap(old, n) {
			return
		}
	}
}

// cutAttribute names the first string attribute the span holds shorter
// than it was set: one of set, or the start data (startLen long). "" if none.
func cutAttribute(held, set []attribute.KeyValue, startLen int) attribute.Key {
	for _, h := range held {
		if h.Value.Type() != attribute.STRING {
			continue
		}
		n := len(h.Value.AsString())
		if h.Key == semconv.AttrStartData && n < startLen {
			return h.Key
		}
		for _, kv := range set {
			if kv.Key == h.Key && kv.Value.Type() == attribute.STRING && n < len(kv.Value.AsString()) {
				return h.Key
			}
		}
	}
	return ""
}

// finishAhead reports whether finish events go as log records too
// (DeliverySyncFinish), so a span that is not exported loses none.
func (s *Session) finishAhead() bool {
	return s.delivery == DeliverySyncFinish && s.logs.logger != nil
}

// nextEvent takes the session's next seq (the first event is 1, like the
// Python SDK) together with the event's timestamp.
func (s *Session) nextEvent() (int64, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastSeq++
	return s.lastSeq, time.Now()
}

// parent returns the context an operation span starts from, and the link to
// keep when the caller's span belongs to another trace.
func (s *Session) parent(ctx context.Context) (context.Context, []trace.Link) {
	caller := trace.SpanContextFromContext(ctx)
	rootSC := s.root.SpanContext()
	if caller.IsValid() && caller.TraceID() == rootSC.TraceID() {
		return ctx, nil
	}
	var links []trace.Link
	if caller.IsValid() {
		links = []trace.Link{{SpanContext: caller}}
	}
	return trace.ContextWithSpan(ctx, s.root), links
}
