package load

import (
	"testing"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// The single-event load must be what an HttpProxySink posts: valid events,
// a start and its finish per operation, seqs in order, every id fresh.
func TestProxySessionEventsAreValidPairs(t *testing.T) {
	s := newProxySession()
	ids := map[string]bool{}
	var start auditevent.Event
	for i := range 6 {
		ev, err := auditevent.Decode(s.next())
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if ev.Seq != int64(i+1) || ev.SessionID.String() != s.id {
			t.Fatalf("event %d: seq %d session %s", i, ev.Seq, ev.SessionID)
		}
		if ids[ev.EventID.String()] {
			t.Fatalf("event %d: event_id %s repeated", i, ev.EventID)
		}
		ids[ev.EventID.String()] = true
		if i%2 == 0 {
			if ev.Phase != auditevent.PhaseStart {
				t.Fatalf("event %d: phase %s, want start", i, ev.Phase)
			}
			start = ev
			continue
		}
		if ev.Phase != auditevent.PhaseFinish || ev.SpanID != start.SpanID || !ev.OK {
			t.Fatalf("event %d: phase %s span %s ok %v, want the finish of span %s", i, ev.Phase, ev.SpanID, ev.OK, start.SpanID)
		}
	}
}
