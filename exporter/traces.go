package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import (
	"context"
	"fmt"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/ptrace"

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
	e.telemetry.skipped(ctx, reasonInvalidSpan, st.Invalid-st.TooLong)
	e.telemetry.skipped(ctx, reasonLineTooLong, st.TooLong)
	logfield.SpanStats(e.logger, st)
	logfield.SeqEvictions(e.logger, e.telemetry.seqSessionsEvicted(ctx, e.mapper.SeqEvictions()))
	if st.Invalid > 0 && len(events) == 0 {
		msg := fmt.Sprintf("%d sandbox spans refused, none written; first: %s", st.Invalid, logfield.SpanAttrText(st.FirstInvalid))
		return allRefused(msg, st.FirstInvalid)
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
