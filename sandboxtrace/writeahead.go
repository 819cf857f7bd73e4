package sandboxtrace

import (
	"context"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// startEvent is what the write-ahead record says about an operation's start.
type startEvent struct {
	op   string
	seq  int64
	ts   time.Time
	id   uuid.UUID
	data auditevent.Data
	// noSpanID is the records' span id when the span has none.
	noSpanID string
}

// writeAhead emits the start event as an audit log record (docs/format.md,
// "Inside the collector") before the operation runs. ctx carries the
// operation's span (the record takes its trace and span ids), parent the
// span the operation's span started from. With sync delivery it returns the
// export's failure; best effort never fails here (a lost record is reported
// by the log pipeline).
func (s *Session) writeAhead(ctx, parent context.Context, st startEvent) error {
	if s.logs.logger == nil {
		return nil
	}
	ev := s.startEventOf(trace.SpanContextFromContext(ctx), trace.SpanContextFromContext(parent), st)
	r := s.eventRecord(&ev, log.SeverityInfo)
	a := &ack{timeout: s.syncTimeout}
	s.logs.logger.Emit(withAck(recordContext(ctx, st.noSpanID), a), r)
	if !s.delivery.synchronous() {
		s.checkQueued(a)
		return nil
	}
	s.unseen(a)
	return a.result(ErrStartNotRecorded)
}

// unseen settles a sync record that no processor of ours saw: a provider
// that still enables records has no SyncLogProcessor (a.done, not
// synced); one that does not is shut down or records nothing.
func (s *Session) unseen(a *ack) {
	if !a.done && s.logsEnabled() {
		a.done = true
	}
}

// logsEnabled reports whether the session's logger provider still enables
// its records: a shut-down SDK provider enables none.
func (s *Session) logsEnabled() bool {
	params := log.EnabledParameters{Severity: log.SeverityInfo, EventName: semconv.EventSessionStart}
	return s.logs.logger.Enabled(context.Background(), params)
}

// eventRecord is ev as the audit log record the collector maps back:
// body the canonical line, the event name and attributes of its phase.
func (s *Session) eventRecord(ev *auditevent.Event, sev log.Severity) log.Record {
	var r log.Record
	name := semconv.EventSessionStart
	if ev.Phase == auditevent.PhaseFinish {
		name = semconv.EventSessionFinish
	}
	r.SetEventName(name)
	r.SetTimestamp(ev.TS.Time())
	r.SetObservedTimestamp(time.Now())
	r.SetSeverity(sev)
	r.SetSeverityText(sev.String())
	r.SetBody(attribute.StringValue(string(auditevent.AppendJSON(make([]byte, 0, 768), ev))))
	r.AddAttributes(
		attribute.String(semconv.AttrSessionID, s.idText),
		attribute.String(semconv.AttrOperation, ev.Op),
		attribute.String(semconv.AttrEventPhase, ev.Phase.String()),
		attribute.Int64(semconv.AttrEventSeq, ev.Seq),
	)
	return r
}

// checkQueued counts a best-effort record that reached no LogProcessor, and
// reports one a SyncLogProcessor failed to export (a provider shared with
// sync sessions). An SDK provider that is shut down drops records before
// any processor sees them, so the LogProcessor cannot count them itself;
// the session counts them on the LogProcessor it built, or the one that
// queued its records before (a provider the caller built with
// NewLogProcessor). A provider with other processors only is not ours to
// judge.
func (s *Session) checkQueued(a *ack) {
	if a.done {
		if a.proc != nil {
			s.logProc.CompareAndSwap(nil, a.proc)
		}
		if a.synced && a.err != nil {
			// A SyncLogProcessor exported it and failed; best effort
			// goes on, but not in silence.
			otel.Handle(fmt.Errorf("sandboxtrace: a start record was lost: %w", a.err))
		}
		return
	}
	// A live provider whose other processors filtered the record out is
	// not a loss; a shut-down one no longer enables anything.
	if p := s.logProc.Load(); p != nil && !s.logsEnabled() {
		otel.Handle(p.lose(1, errProcessorShutdown))
	}
}

// startEventOf builds the start event exactly as the collector maps it back
// from the finished span (docs/format.md, "Inside the collector"), so both
// copies carry one canonical line.
func (s *Session) startEventOf(sc, parent trace.SpanContext, st startEvent) auditevent.Event {
	ev := auditevent.Event{
		Version:   1,
		EventID:   st.id,
		TS:        auditevent.TimestampFromTime(st.ts),
		SessionID: s.id,
		Seq:       st.seq,
		Op:        st.op,
		Phase:     auditevent.PhaseStart,
		Data:      st.data,
	}
	if st.noSpanID != "" {
		// A non-recording provider gives no span of its own; the record
		// still needs a span id, as the Python SDK's events always have.
		ev.SpanID = st.noSpanID
		return ev
	}
	ev.SpanID = sc.SpanID().String()
	ev.TraceID = auditevent.Ptr(sc.TraceID().String())
	if parent.IsValid() {
		ev.ParentSpanID = auditevent.Ptr(parent.SpanID().String())
	}
	return ev
}

// recordContext is ctx for emitting a record of the operation: without a
// span of its own (noSpanID set), the record carries no trace ids, as its
// body names none.
func recordContext(ctx context.Context, noSpanID string) context.Context {
	if noSpanID != "" {
		return trace.ContextWithSpanContext(ctx, trace.SpanContext{})
	}
	return ctx
}

// noSpanIDPrefix starts the span id of an operation without a span, as the
// Python SDK names one: sandbox_op_ and a random UUID's hex.
const noSpanIDPrefix = "sandbox_op_"

func randomSpanID() string {
	id := uuid.New()
	return noSpanIDPrefix + hex.EncodeToString(id[:])
}
