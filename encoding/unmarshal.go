package sandboxauditencoding // import "github.com/sandboxaudit/sandboxaudit/encoding"

import (
	"context"
	"errors"
	"math"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/encoding/internal/metadata"
	"github.com/sandboxaudit/sandboxaudit/internal/logmap"
	"github.com/sandboxaudit/sandboxaudit/internal/ndjson"
	"github.com/sandboxaudit/sandboxaudit/internal/pairing"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
)

// ErrInvalidMessage marks a message refused because a line is not a valid
// audit event; the *ndjson.LineError (errors.As) says which line and field.
var ErrInvalidMessage = errors.New("sandboxaudit_encoding: invalid message")

// messageError is what the Unmarshal methods return for a bad line. Its
// text names the line, the field and the error type but holds no value from
// the message, because receivers log it (the kafka receiver logs every
// unmarshal error) and a line may carry exec output or file content.
type messageError struct{ le *ndjson.LineError }

func (m *messageError) Error() string { return ErrInvalidMessage.Error() + ": " + m.le.Redacted() }

func (m *messageError) Is(target error) bool { return target == ErrInvalidMessage }

func (m *messageError) Unwrap() error { return m.le }

// UnmarshalLogs reads canonical lines (any valid event JSON, one per line:
// the receiver's ndjson intake rules, except that event_id and ts are
// required) into one audit log record per event, as docs/format.md
// ("Inside the collector") describes it, in order. A single bad line
// refuses the whole message.
func (e *encodingExtension) UnmarshalLogs(buf []byte) (plog.Logs, error) {
	events, err := e.decode(buf)
	if err != nil {
		return plog.NewLogs(), err
	}
	return logmap.EventsToLogs(events, metadata.ScopeName), nil
}

// UnmarshalTraces reads canonical lines into spans, one per operation:
// start and finish events of the same session and span_id that are in this
// message become one span; one without its pair becomes a span marked
// incomplete (a start) or start-missing (a finish), as in the receiver. Each
// span maps back to exactly its events. Pairs are not held across messages:
// a start kept waiting for a later message would be acknowledged to Kafka
// before it reached the pipeline, and a crash would lose it.
func (e *encodingExtension) UnmarshalTraces(buf []byte) (ptrace.Traces, error) {
	events, err := e.decode(buf)
	if err != nil {
		return ptrace.NewTraces(), err
	}
	td := ptrace.NewTraces()
	if len(events) == 0 {
		return td, nil
	}
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	ss.Scope().SetName(metadata.ScopeName)
	ss.Scope().SetVersion(e.buildVer)
	spans := ss.Spans()
	for _, p := range pairWithin(events) {
		spanmap.AppendSpan(spans, p.Start, p.Finish)
	}
	return td, nil
}

// pairWithin pairs the events of one message with the receiver's pairing,
// bounded only by the message itself: nothing times out or is evicted, and
// what is left unpaired is flushed, starts oldest first.
func pairWithin(events []auditevent.Event) []pairing.Pair {
	p := pairing.New(pairing.Config{MaxPending: len(events) + 1, PendingTimeout: math.MaxInt64})
	ready := make([]pairing.Pair, 0, len(events))
	for i := range events {
		ready = p.Add(ready, &events[i])
	}
	return p.Flush(ready)
}

// decode reads the message's events and counts them, or counts the refusal.
func (e *encodingExtension) decode(buf []byte) ([]auditevent.Event, error) {
	ctx := context.Background()
	// A message is read again after a rebalance or a crash: a line must
	// decode to the same event each time, so no id or ts is made up.
	events, err := ndjson.DecodeWith(buf, nil, auditevent.DecodeOptions{NoIDDefaults: true})
	if err != nil {
		e.telemetry.tb.SandboxauditEncodingMessagesRejected.Add(ctx, 1)
		var le *ndjson.LineError
		if errors.As(err, &le) {
			return nil, &messageError{le: le}
		}
		return nil, err
	}
	e.telemetry.tb.SandboxauditEncodingEventsUnmarshaled.Add(ctx, int64(len(events)))
	return events, nil
}
