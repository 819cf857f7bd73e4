package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import (
	"context"
	"fmt"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/logfield"
)

// pushTraces maps every sandbox span to its start and finish events and
// writes them. Spans that are not sandbox spans are skipped and counted;
// malformed sandbox spans are skipped, counted and logged.
func (e *auditExporter) pushTraces(ctx context.Context, td ptrace.Traces) error {
	ep := e.eventBufs.get()
	defer e.eventBufs.put(ep)

	events, st := e.mapper.AppendTraces((*ep)[:0], td)
	*ep = events
	e.telemetry.skipped(ctx, reasonNotSandboxSpan, st.NotSandbox)
	if st.Invalid > 0 {
		e.telemetry.skipped(ctx, reasonInvalidSpan, st.Invalid)
		// One line per batch, not per span: a misbehaving producer must
		// not flood the log. Only attribute names and the problem are
		// logged, never attribute values (they may hold exec output).
		e.logger.Warn("Skipped malformed sandbox spans",
			zap.Int("spans", st.Invalid), logfield.SpanAttr("first", st.FirstInvalid), logfield.SpanAttr("last", st.LastInvalid))
	}
	if n := e.telemetry.seqSessionsEvicted(ctx, e.mapper.SeqEvictions()); n > 0 {
		// Counted, not per session: the session ids stay out of the log.
		e.logger.Warn("Span mapper dropped the seq counters of least recently used sessions; "+
			"seqs assigned to their spans that lack seq attributes start again at 1 and may repeat",
			zap.Int64("sessions", n))
	}
	if st.Ignored > 0 {
		e.logger.Debug("Left malformed optional attributes out of sandbox events",
			zap.Int("attributes", st.Ignored), logfield.SpanAttr("last", st.LastIgnored))
	}
	if st.Invalid > 0 && len(events) == 0 {
		return allRefused(fmt.Sprintf("%d sandbox spans refused, none written; first: %s", st.Invalid, logfield.SpanAttrText(st.FirstInvalid)))
	}
	return e.writeEvents(ctx, events)
}

// eventPool recycles the per-push event slices.
type eventPool struct{ l freeList[[]auditevent.Event] }

// maxPooledEvents bounds a kept event slice (≈4 MB of events).
const maxPooledEvents = 1 << 14

func (p *eventPool) get() *[]auditevent.Event {
	if v, ok := p.l.get(); ok {
		return v
	}
	s := make([]auditevent.Event, 0, 256)
	return &s
}

func (p *eventPool) put(s *[]auditevent.Event) {
	if cap(*s) > maxPooledEvents {
		return
	}
	// Drop the references to this batch's data before pooling.
	clear(*s)
	*s = (*s)[:0]
	p.l.put(s, cap(*s)*int(unsafe.Sizeof(auditevent.Event{})))
}
