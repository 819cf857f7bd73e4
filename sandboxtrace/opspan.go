package sandboxtrace

import (
	"fmt"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
)

// opSpan is the operation's span as Op.Span hands it out. Finish ends the
// span with the operation's outcome; an End before it (a habitual
// `defer span.End()` that runs early) exported the span without its finish
// attributes, and the collector wrote ok:true for a failed operation, with
// a finish seq of its own choosing. So End is ignored and reported.
type opSpan struct {
	trace.Span
	o *Op
}

// End does nothing: Finish ends the span. Before Finish it reports the
// misuse to the OTel error handler.
func (s opSpan) End(...trace.SpanEndOption) {
	if !s.o.finished.Load() {
		otel.Handle(fmt.Errorf("sandboxtrace: %s: Op.Span().End() before Finish is ignored: Finish ends the span with the operation's outcome", s.o.op))
	}
}
