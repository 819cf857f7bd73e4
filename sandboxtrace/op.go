package sandboxtrace

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// Op is one operation in flight: its start event is recorded, its finish
// event is recorded by Finish. Its methods are safe for concurrent use, and
// on the nil *Op a failed Start returns: they do nothing, and Finish returns
// errNilOp.
type Op struct {
	s      *Session
	op     string
	span   trace.Span
	parent trace.SpanContext
	// noSpanID names the operation in its records when the provider gave
	// its span no ids (a no-op provider): start and finish share it.
	noSpanID  string
	startData []byte
	runStart  time.Time

	mu         sync.Mutex
	finishData map[string]any
	stdout     []byte
	stderr     []byte
	notOK      bool

	finished atomic.Bool
}

// errNilOp is Finish on the nil *Op of a failed Start (a deferred Finish
// written before the error check): nothing was started, so nothing ends.
var errNilOp = errors.New("sandboxtrace: Finish on a nil Op: its Start failed, so there is nothing to finish")

// FinishOptions describe an operation's outcome. Zero values mean "as
// recorded so far": finish data set with SetFinishData, else the start data.
type FinishOptions struct {
	// Data is the finish event's data; nil keeps the start data.
	Data map[string]any
	// Err is the operation's failure, nil on success. An *Error in its chain
	// gives error_code, error_type and error_retryable; any other error is
	// recorded without a code and typed by its Go type name (see Error).
	// error_message is Err's full text.
	Err error
	// Stdout and Stderr are raw exec output, recorded only when the session
	// captures output. Nil means "no output"; empty means "empty output".
	Stdout, Stderr []byte
	// NotOK records ok=false without an error: the four error fields stay
	// null (the reference's exec with a non-zero exit). Err, when set, wins.
	NotOK bool
}

// Start records the start event of op (one of auditevent.Ops) and returns
// the operation and a ctx carrying its span as Op.Span returns it, so nested
// operations become its children. data is the start event's data (nil = {}).
//
// With a log pipeline (WithLogExporter, WithLoggerProvider) Start first
// emits the start event as a log record (README.md, "Delivery modes").
// With DeliverySync, a record the collector did not acknowledge makes Start
// return an error wrapping ErrStartNotRecorded; the operation must then not
// run.
//
// An unknown op or data that cannot be encoded as JSON (NaN, a channel, two
// keys that differ only in bytes that are not UTF-8, which are written
// alike, a []byte that is not UTF-8) is a programming error: Start then
// records nothing and returns an error.
func (s *Session) Start(ctx context.Context, op string, data map[string]any) (context.Context, *Op, error) {
	ctx = orBackground(ctx)
	if !auditevent.IsOp(op) {
		return ctx, nil, fmt.Errorf("sandboxtrace: unknown operation %q (want one of %v)", op, auditevent.Ops())
	}
	startData, err := auditevent.MarshalData(data)
	if err != nil {
		return ctx, nil, fmt.Errorf("sandboxtrace: %s start data: %w", op, err)
	}
	parent, links := s.parent(ctx)
	seq, ts := s.nextEvent()
	startID := uuid.New()
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs,
		attribute.String(semconv.AttrOperation, op),
		attribute.String(semconv.AttrSessionID, s.idText),
		attribute.Int64(semconv.AttrStartSeq, seq),
		attribute.String(semconv.AttrStartID, startID.String()),
		attribute.String(semconv.AttrStartData, startData.String()),
	)
	if s.backend != "" {
		attrs = append(attrs, attribute.String(semconv.AttrBackend, s.backend))
	}
	if s.genAI {
		attrs = genAIAttributes(attrs, op)
	}
	opCtx, span := s.tracer.Start(parent, semconv.SpanNamePrefix+op,
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(ts),
		trace.WithLinks(links...),
		trace.WithAttributes(attrs...))
	// A no-op provider's span carries the caller's flags: checkSpanKept
	// reports that provider.
	if sc := span.SpanContext(); sc.IsValid() && !sc.IsSampled() && !s.finishAhead() && !s.noopProvider {
		s.reportUnsampled()
	}
	st := startEvent{op: op, seq: seq, ts: ts, id: startID, data: startData}
	parentSC := trace.SpanContextFromContext(parent)
	if !ownSpan(span.SpanContext(), parentSC) {
		st.noSpanID = randomSpanID()
	}
	if err := s.writeAhead(opCtx, parent, st); err != nil {
		// The span is left unended on purpose: ending it would export a
		// start event for an operation that never ran.
		return ctx, nil, fmt.Errorf("sandboxtrace: %s: %w", op, err)
	}
	o := &Op{s: s, op: op, span: span, parent: parentSC,
		noSpanID: st.noSpanID, startData: startData.Bytes()}
	// The ctx holds the span as Op.Span hands it out, so that ending the
	// ctx's span in the function cannot end it without its outcome.
	opCtx = trace.ContextWithSpan(opCtx, o.Span())
	// The duration counts from here, as the reference's t0 is taken once
	// its start event is emitted: a sync round trip is not run time.
	o.runStart = time.Now()
	s.open.Add(1)
	return opCtx, o, nil
}

// ownSpan reports whether the provider gave the operation a span of its
// own. A no-op tracer (a no-op or shut-down provider) hands out the parent's
// span context, or none: taken as the operation's, it would name the parent
// as the span and as its parent, and one span for every operation.
func ownSpan(sc, parent trace.SpanContext) bool {
	return sc.IsValid() && (sc.TraceID() != parent.TraceID() || sc.SpanID() != parent.SpanID())
}

// Do runs fn as operation op: it records the start event, calls fn, and
// records the finish event with fn's error. fn may set finish data and
// output on its Op, or finish it itself (Do's own Finish is then a no-op).
// A panic in fn is recorded as a failed operation (error.type "panic") and
// re-raised; so is runtime.Goexit (error.type "Goexit"), which goes on.
//
// Do returns fn's error, joined with any recording error.
func (s *Session) Do(ctx context.Context, op string, startData map[string]any, fn func(ctx context.Context, o *Op) error) error {
	ctx, o, err := s.Start(ctx, op, startData)
	if err != nil {
		return err
	}
	returned := false
	defer func() {
		if r := recover(); r != nil {
			_ = o.Finish(FinishOptions{Err: &Error{Type: "panic", Message: fmt.Sprint(r)}})
			panic(r)
		}
		if !returned {
			// fn called runtime.Goexit (t.FailNow does): no panic to
			// recover, but the operation still did not complete.
			_ = o.Finish(FinishOptions{Err: &Error{Type: "Goexit", Message: "the operation's goroutine exited (runtime.Goexit)"}})
		}
	}()
	err = fn(ctx, o)
	returned = true
	if ferr := o.Finish(FinishOptions{Err: err}); ferr != nil {
		return errors.Join(err, ferr)
	}
	return err
}

// Span returns the operation's span, to add events or attributes or to
// start children from. Its End does nothing (Finish ends it); called
// before Finish, it is reported to the OTel error handler.
func (o *Op) Span() trace.Span {
	if o == nil {
		return trace.SpanFromContext(context.Background()) // a no-op span
	}
	return opSpan{Span: o.span, o: o}
}

// SetFinishData sets the finish event's data (a FinishOptions.Data passed to
// Finish takes precedence).
func (o *Op) SetFinishData(data map[string]any) {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.finishData = data
	o.mu.Unlock()
}

// SetOutput sets the raw exec output (FinishOptions.Stdout/Stderr passed to
// Finish take precedence).
func (o *Op) SetOutput(stdout, stderr []byte) {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.stdout, o.stderr = stdout, stderr
	o.mu.Unlock()
}

// SetNotOK marks the operation as not ok without an error (see
// FinishOptions.NotOK).
func (o *Op) SetNotOK() {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.notOK = true
	o.mu.Unlock()
}

// Finish records the finish event and ends the span. Only the first call
// records; later calls do nothing and return nil.
//
// Finish returns an error when the finish data cannot be encoded (the
// finish_data attribute is then left out, which the mapping reads as "same
// as start") or when an *Error carries a code that is not a reference
// ErrorCode (recorded without the code). The span is ended either way.
func (o *Op) Finish(opts FinishOptions) error {
	if o == nil {
		return errNilOp
	}
	if !o.finished.CompareAndSwap(false, true) {
		return nil
	}
	o.s.open.Add(-1)
	in := o.finishInputs(opts)
	var problems []error
	finishData, err := o.finishDataOf(in.data)
	if err != nil {
		problems = append(problems, err)
	}

	seq, ts := o.s.nextEvent()
	fin := finishEvent{seq: seq, ts: ts, id: uuid.New(), ok: opts.Err == nil && !in.notOK,
		durationMS: float64(ts.Sub(o.runStart)) / float64(time.Millisecond), data: finishData}
	attrs := make([]attribute.KeyValue, 0, 12)
	attrs = append(attrs,
		attribute.Int64(semconv.AttrFinishSeq, seq),
		attribute.String(semconv.AttrFinishID, fin.id.String()),
		attribute.Bool(semconv.AttrOK, fin.ok),
		attribute.Float64(semconv.AttrDurationMS, fin.durationMS),
	)
	if finishData != nil {
		attrs = append(attrs, attribute.String(semconv.AttrFinishData, string(finishData)))
		attrs = appendFlatCopies(attrs, in.data)
	}
	attrs = o.appendOutput(attrs, &fin, in)
	if opts.Err != nil {
		var err error
		if attrs, err = o.appendError(attrs, &fin, opts.Err); err != nil {
			problems = append(problems, err)
		}
	} else if in.notOK {
		// No description: the mapping would read it as error_message.
		o.span.SetStatus(codes.Error, "")
	}
	o.span.SetAttributes(attrs...)
	if err := o.writeAheadFinish(fin); err != nil {
		problems = append(problems, fmt.Errorf("sandboxtrace: %s: %w", o.op, err))
	}
	if !o.s.finishAhead() {
		o.s.checkSpanKept(o.span)
	}
	o.span.End(trace.WithTimestamp(ts))
	// After End: the SDK dedupes the attributes (with a map) when they are
	// first read, and End reads them only for its span processors.
	o.s.checkAttributesKept(o.span, attrs, o.startData)
	return errors.Join(problems...)
}

// finishInputs are what Finish writes: what the Op was given while it ran,
// overridden by the options.
type finishInputs struct {
	data           map[string]any
	stdout, stderr []byte
	notOK          bool
}

func (o *Op) finishInputs(opts FinishOptions) finishInputs {
	o.mu.Lock()
	in := finishInputs{data: o.finishData, stdout: o.stdout, stderr: o.stderr, notOK: o.notOK || opts.NotOK}
	o.mu.Unlock()
	if opts.Data != nil {
		in.data = opts.Data
	}
	if opts.Err != nil {
		// As the reference: a failed operation's finish data is its start
		// data; what was set for a success does not survive.
		in.data = nil
	}
	if opts.Stdout != nil {
		in.stdout = opts.Stdout
	}
	if opts.Stderr != nil {
		in.stderr = opts.Stderr
	}
	return in
}

// finishDataOf is the finish line's data: the start data unless other data
// was given, and none when that data does not marshal.
func (o *Op) finishDataOf(data map[string]any) ([]byte, error) {
	if data == nil {
		return o.startData, nil
	}
	fd, err := marshalData(data)
	if err != nil {
		return nil, fmt.Errorf("sandboxtrace: %s finish data: %w", o.op, err)
	}
	return fd, nil
}

// appendOutput records captured output, cut to the session's bound, when
// the session captures it.
func (o *Op) appendOutput(attrs []attribute.KeyValue, fin *finishEvent, in finishInputs) []attribute.KeyValue {
	if !o.s.captureOutput {
		return attrs
	}
	if in.stdout != nil {
		fin.stdout = cutOutput(in.stdout, o.s.maxOutputBytes)
		attrs = append(attrs, attribute.String(semconv.AttrExecStdoutBytes, base64.StdEncoding.EncodeToString(fin.stdout)))
	}
	if in.stderr != nil {
		fin.stderr = cutOutput(in.stderr, o.s.maxOutputBytes)
		attrs = append(attrs, attribute.String(semconv.AttrExecStderrBytes, base64.StdEncoding.EncodeToString(fin.stderr)))
	}
	return attrs
}

// appendError records a failed operation's error fields and the span's
// status; a code that is not one of the reference's is left out and reported.
func (o *Op) appendError(attrs []attribute.KeyValue, fin *finishEvent, opErr error) ([]attribute.KeyValue, error) {
	f := safeFieldsOf(opErr)
	err := checkCode(f.code)
	if err != nil {
		f.code = ""
	}
	attrs = append(attrs,
		attribute.String(semconv.AttrErrorType, f.typ),
		attribute.String(semconv.AttrErrorMessage, f.message))
	if f.code != "" {
		attrs = append(attrs, attribute.String(semconv.AttrErrorCode, f.code))
	}
	if f.retryable != nil {
		attrs = append(attrs, attribute.Bool(semconv.AttrErrorRetryable, *f.retryable))
	}
	fin.err = &f
	o.span.SetStatus(codes.Error, f.message)
	return attrs, err
}

// marshalData encodes data as canonical JSON object text with the core's
// encoder, so floats keep their Python spelling (30.0 stays 30.0).
func marshalData(data map[string]any) ([]byte, error) {
	d, err := auditevent.MarshalData(data)
	if err != nil {
		return nil, err
	}
	return d.Bytes(), nil
}

// appendFlatCopies copies well-known finish data values to their own
// attributes, like the Python SDK does on its spans, so they can be queried.
func appendFlatCopies(attrs []attribute.KeyValue, data map[string]any) []attribute.KeyValue {
	if v, ok := asInt64(data[semconv.AttrProcessExitCode]); ok {
		attrs = append(attrs, attribute.Int64(semconv.AttrProcessExitCode, v))
	} else if v, ok := asInt64(data["exit_code"]); ok {
		attrs = append(attrs, attribute.Int64(semconv.AttrProcessExitCode, v))
	}
	if v, ok := asInt64(data[semconv.AttrServerPort]); ok {
		attrs = append(attrs, attribute.Int64(semconv.AttrServerPort, v))
	}
	if v, ok := data[semconv.AttrServerAddress].(string); ok {
		attrs = append(attrs, attribute.String(semconv.AttrServerAddress, validText(v)))
	}
	return attrs
}

func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	}
	return 0, false
}

// truncMark ends captured output that the capture bound cut, so the cut is
// visible where the output is read, as SafeDecode marks its own cut.
const truncMark = "\u2026"

// cutOutput cuts b to max bytes and marks a cut with truncMark; the span
// carries the result base64-encoded (OTel Go attributes have no bytes type;
// the mapping takes a base64 string too). The cut backs off to the start of
// a UTF-8 sequence it would split, so a bounded capture does not end in a
// replacement character that the output never contained, and to the start
// of a token it would split (see splitTokenStart).
func cutOutput(b []byte, max int) []byte {
	if len(b) <= max {
		return b
	}
	cut := max
	for i := max - 1; i >= 0 && i > max-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			// size 1 is an invalid byte: raw bytes are cut as they are.
			if _, size := utf8.DecodeRune(b[i:]); size > 1 && i+size > max {
				cut = i
			}
			break
		}
	}
	cut = splitTokenStart(b, cut)
	marked := make([]byte, 0, cut+len(truncMark))
	return append(append(marked, b[:cut]...), truncMark...)
}
