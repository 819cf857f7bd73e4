package sandboxtrace

import (
	"context"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// finishEvent is what an operation's span says about its finish.
type finishEvent struct {
	seq            int64
	ts             time.Time
	id             uuid.UUID
	ok             bool
	durationMS     float64
	data           []byte       // nil: the start data
	err            *errorFields // nil: no error fields
	stdout, stderr []byte       // captured output, cut; nil: none
}

// writeAheadFinish exports the finish event as a log record and waits for
// the collector's acknowledgement, under DeliverySyncFinish only. The
// record carries the line the collector maps from the span, so the two
// copies share one event_id and the exporter writes it once.
func (o *Op) writeAheadFinish(fin finishEvent) error {
	s := o.s
	if !s.finishAhead() {
		return nil
	}
	ev := o.finishEventOf(fin)
	sev := log.SeverityInfo
	if !fin.ok {
		sev = log.SeverityWarn
	}
	r := s.eventRecord(&ev, sev)
	if fin.stdout != nil {
		r.AddAttributes(attribute.ByteSlice(semconv.AttrExecStdoutBytes, fin.stdout))
	}
	if fin.stderr != nil {
		r.AddAttributes(attribute.ByteSlice(semconv.AttrExecStderrBytes, fin.stderr))
	}
	a := &ack{timeout: s.syncTimeout}
	ctx := recordContext(trace.ContextWithSpan(context.Background(), o.span), o.noSpanID)
	s.logs.logger.Emit(withAck(ctx, a), r)
	s.unseen(a)
	return a.result(ErrFinishNotRecorded)
}

// finishEventOf builds the finish event as the collector maps it from the
// ended span (docs/format.md, "Inside the collector"): the span's ids, and
// no stdout or stderr text, which only the collector's payload policy
// writes.
func (o *Op) finishEventOf(fin finishEvent) auditevent.Event {
	data := fin.data
	if data == nil {
		data = o.startData
	}
	ev := auditevent.Event{
		Version:    1,
		EventID:    fin.id,
		TS:         auditevent.TimestampFromTime(fin.ts),
		SessionID:  o.s.id,
		Seq:        fin.seq,
		Op:         o.op,
		Phase:      auditevent.PhaseFinish,
		Data:       auditevent.MustParseData(string(data)),
		OK:         fin.ok,
		DurationMS: fin.durationMS,
	}
	setFinishIDs(&ev, o.span.SpanContext(), o.parent, o.noSpanID)
	if e := fin.err; e != nil {
		ev.ErrorType = auditevent.Ptr(e.typ)
		ev.ErrorMessage = auditevent.Ptr(e.message)
		ev.ErrorRetryable = e.retryable
		if e.code != "" {
			ev.ErrorCode = auditevent.Ptr(e.code)
		}
	}
	return ev
}

func setFinishIDs(ev *auditevent.Event, sc, parent trace.SpanContext, noSpanID string) {
	if noSpanID != "" {
		ev.SpanID = noSpanID
		return
	}
	ev.SpanID = sc.SpanID().String()
	ev.TraceID = auditevent.Ptr(sc.TraceID().String())
	if parent.IsValid() {
		ev.ParentSpanID = auditevent.Ptr(parent.SpanID().String())
	}
}
