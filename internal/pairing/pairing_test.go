package pairing

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

var (
	sessionA = uuid.MustParse("6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b")
	sessionB = uuid.MustParse("0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e")
	t0       = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
)

// clock is a manual clock for Config.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

func newPairer(maxPending int, timeout time.Duration) (*Pairer, *clock) {
	c := &clock{t: t0}
	return New(Config{MaxPending: maxPending, PendingTimeout: timeout, Now: c.Now}), c
}

var idCounter atomic.Uint32 // TestConcurrentUse makes events on 8 goroutines

func event(session uuid.UUID, spanID string, phase auditevent.Phase) *auditevent.Event {
	n := idCounter.Add(1)
	id := uuid.UUID{}
	id[0], id[1], id[2], id[3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return &auditevent.Event{Version: 1, EventID: id, SessionID: session, SpanID: spanID, Op: "exec", Phase: phase}
}

func start(session uuid.UUID, spanID string) *auditevent.Event {
	return event(session, spanID, auditevent.PhaseStart)
}

func finish(session uuid.UUID, spanID string) *auditevent.Event {
	return event(session, spanID, auditevent.PhaseFinish)
}

// describe renders pairs as "start-span/finish-span" ("-" for nil) so
// expectations read plainly.
func describe(pairs []Pair) []string {
	out := make([]string, len(pairs))
	for i, p := range pairs {
		s, f := "-", "-"
		if p.Start != nil {
			s = p.Start.SpanID
		}
		if p.Finish != nil {
			f = p.Finish.SpanID
		}
		out[i] = s + "/" + f
	}
	return out
}

func TestStartThenFinishPairs(t *testing.T) {
	p, _ := newPairer(10, time.Minute)
	s, f := start(sessionA, "op1"), finish(sessionA, "op1")
	assert.Empty(t, p.Add(nil, s))
	assert.Equal(t, 1, p.Len())
	out := p.Add(nil, f)
	require.Len(t, out, 1)
	assert.Equal(t, s.EventID, out[0].Start.EventID)
	assert.Equal(t, f.EventID, out[0].Finish.EventID)
	assert.Equal(t, auditevent.PhaseStart, out[0].Start.Phase)
	assert.Equal(t, auditevent.PhaseFinish, out[0].Finish.Phase)
	assert.Equal(t, 0, p.Len())
	assert.Equal(t, Stats{Paired: 1}, p.Stats())
}

func TestFinishWithoutStartIsOrphan(t *testing.T) {
	p, _ := newPairer(10, time.Minute)
	op1 := start(sessionA, "op1")
	p.Add(nil, op1)
	// Same span id, other session: a different operation.
	out := p.Add(nil, finish(sessionB, "op1"))
	assert.Equal(t, []string{"-/op1"}, describe(out))
	assert.Nil(t, out[0].Start)
	assert.Equal(t, sessionB, out[0].Finish.SessionID)
	assert.Equal(t, 1, p.Len())
	assert.Equal(t, Stats{Pending: 1, PendingBytes: int64(auditevent.EncodedLen(op1)), Orphans: 1}, p.Stats())
}

func TestSweepTimesOutOldestFirst(t *testing.T) {
	p, c := newPairer(10, time.Minute)
	p.Add(nil, start(sessionA, "a"))
	c.advance(10 * time.Second)
	p.Add(nil, start(sessionA, "b"))
	c.advance(10 * time.Second)
	p.Add(nil, start(sessionA, "c"))

	assert.Empty(t, p.Sweep(nil, t0.Add(time.Minute-time.Nanosecond)), "not yet")
	assert.Equal(t, []string{"a/-"}, describe(p.Sweep(nil, t0.Add(time.Minute))), "exactly the timeout")
	assert.Equal(t, []string{"b/-", "c/-"}, describe(p.Sweep(nil, t0.Add(time.Hour))))
	assert.Equal(t, 0, p.Len())
	assert.Equal(t, int64(3), p.Stats().TimedOut)

	// The finish that comes too late is a finish without a start.
	assert.Equal(t, []string{"-/a"}, describe(p.Add(nil, finish(sessionA, "a"))))
	assert.Equal(t, int64(1), p.Stats().Orphans)
}

func TestSweepAppendsToDst(t *testing.T) {
	p, _ := newPairer(10, time.Second)
	p.Add(nil, start(sessionA, "a"))
	dst := []Pair{{Finish: finish(sessionA, "x")}}
	out := p.Sweep(dst, t0.Add(time.Second))
	assert.Equal(t, []string{"-/x", "a/-"}, describe(out))
}

func TestMaxPendingEvictsOldest(t *testing.T) {
	p, c := newPairer(3, time.Minute)
	for _, id := range []string{"a", "b", "c"} {
		assert.Empty(t, p.Add(nil, start(sessionA, id)))
		c.advance(time.Second)
	}
	out := p.Add(nil, start(sessionA, "d"))
	assert.Equal(t, []string{"a/-"}, describe(out))
	assert.Equal(t, 3, p.Len())
	assert.Equal(t, int64(1), p.Stats().Evicted)

	// A finish for the evicted start is an orphan; the others still pair.
	assert.Equal(t, []string{"-/a"}, describe(p.Add(nil, finish(sessionA, "a"))))
	assert.Equal(t, []string{"b/b"}, describe(p.Add(nil, finish(sessionA, "b"))))
	// Eviction order followed arrival, not key order.
	assert.Equal(t, []string{"c/-", "d/-"}, describe(p.Flush(nil)))
}

func TestDuplicateStart(t *testing.T) {
	p, _ := newPairer(10, time.Minute)
	first := start(sessionA, "a")
	p.Add(nil, first)

	// Redelivery of the same event: dropped.
	again := *first
	assert.Empty(t, p.Add(nil, &again))
	assert.Equal(t, int64(1), p.Stats().Duplicates)

	// Another start under the same key: the old one is given up.
	second := start(sessionA, "a")
	out := p.Add(nil, second)
	require.Len(t, out, 1)
	assert.Equal(t, first.EventID, out[0].Start.EventID)
	assert.Nil(t, out[0].Finish)
	assert.Equal(t, int64(1), p.Stats().Replaced)

	out = p.Add(nil, finish(sessionA, "a"))
	require.Len(t, out, 1)
	assert.Equal(t, second.EventID, out[0].Start.EventID)
}

func TestReplacedStartRestartsItsClock(t *testing.T) {
	p, c := newPairer(10, time.Minute)
	p.Add(nil, start(sessionA, "a"))
	c.advance(50 * time.Second)
	p.Add(nil, start(sessionA, "b"))
	p.Add(nil, start(sessionA, "a")) // replaces, arrives now
	assert.Equal(t, []string{"b/-", "a/-"}, describe(p.Sweep(nil, t0.Add(50*time.Second+time.Minute))))
}

func TestFlush(t *testing.T) {
	p, _ := newPairer(10, time.Minute)
	p.Add(nil, start(sessionA, "a"))
	p.Add(nil, start(sessionB, "a"))
	p.Add(nil, start(sessionA, "b"))
	out := p.Flush(nil)
	assert.Equal(t, []string{"a/-", "a/-", "b/-"}, describe(out))
	assert.Equal(t, sessionB, out[1].Start.SessionID)
	assert.Equal(t, 0, p.Len())
	assert.Equal(t, Stats{Flushed: 3}, p.Stats())
	assert.Empty(t, p.Flush(nil))
}

func TestAddKeepsACopy(t *testing.T) {
	p, _ := newPairer(10, time.Minute)
	s := start(sessionA, "a")
	want := s.EventID
	p.Add(nil, s)
	s.EventID = uuid.Nil // the caller reuses its event
	s.SpanID = "changed"
	f := finish(sessionA, "a")
	out := p.Add(nil, f)
	require.Len(t, out, 1)
	assert.Equal(t, want, out[0].Start.EventID)
	assert.NotSame(t, f, out[0].Finish)
}

// withData is a start whose data makes its canonical line n bytes longer.
func withData(e *auditevent.Event, n int) *auditevent.Event {
	d, err := auditevent.ParseDataString(`{"x":"` + strings.Repeat("\x7f", n/6) + `"}`)
	if err != nil {
		panic(err)
	}
	e.Data = d
	return e
}

// TestMaxPendingBytesEvictsOldest: starts are bounded by the size of their
// lines too, so a few large ones cannot hold unbounded memory; one larger
// than the bound waits alone.
func TestMaxPendingBytesEvictsOldest(t *testing.T) {
	a, b := withData(start(sessionA, "a"), 600), withData(start(sessionA, "b"), 600)
	size := int64(auditevent.EncodedLen(a))
	p := New(Config{MaxPendingBytes: 2*size + 10})
	assert.Empty(t, p.Add(nil, a))
	assert.Empty(t, p.Add(nil, b))
	assert.Equal(t, 2*size, p.Stats().PendingBytes)
	assert.Equal(t, []string{"a/-"}, describe(p.Add(nil, withData(start(sessionA, "c"), 600))))
	assert.Equal(t, []string{"b/b"}, describe(p.Add(nil, finish(sessionA, "b"))))

	huge := withData(start(sessionA, "huge"), 6000)
	assert.Equal(t, []string{"c/-"}, describe(p.Add(nil, huge)))
	assert.Equal(t, Stats{Pending: 1, PendingBytes: int64(auditevent.EncodedLen(huge)), Paired: 1, Evicted: 2}, p.Stats())
	assert.Equal(t, []string{"huge/-"}, describe(p.Flush(nil)))
	assert.Zero(t, p.Stats().PendingBytes)
}

func TestDefaults(t *testing.T) {
	p := New(Config{})
	assert.Equal(t, DefaultMaxPending, p.maxPending)
	assert.Equal(t, int64(DefaultMaxPendingBytes), p.maxBytes)
	assert.Equal(t, DefaultPendingTimeout, p.timeout)
	before := time.Now()
	p.Add(nil, start(sessionA, "a"))
	assert.Empty(t, p.Sweep(nil, before.Add(DefaultPendingTimeout-time.Second)))
	assert.Len(t, p.Sweep(nil, time.Now().Add(DefaultPendingTimeout)), 1)
}

func TestConcurrentUse(t *testing.T) {
	p, _ := newPairer(100_000, time.Hour)
	const workers, ops = 8, 200
	var wg sync.WaitGroup
	results := make([][]Pair, workers)
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			var out []Pair
			for i := 0; i < ops; i++ {
				id := fmt.Sprintf("w%d-op%d", w, i)
				s, f := start(sessionA, id), finish(sessionA, id)
				out = p.Add(out, s)
				_ = p.Len()
				out = p.Add(out, f)
			}
			results[w] = out
		})
	}
	wg.Go(func() {
		for i := 0; i < 100; i++ {
			p.Sweep(nil, t0) // nothing is due; exercises the lock
			_ = p.Stats()
		}
	})
	wg.Wait()
	for w, out := range results {
		require.Len(t, out, ops)
		for i, pr := range out {
			want := fmt.Sprintf("w%d-op%d", w, i)
			require.NotNil(t, pr.Start)
			require.NotNil(t, pr.Finish)
			require.Equal(t, want, pr.Start.SpanID)
			require.Equal(t, want, pr.Finish.SpanID)
		}
	}
	assert.Equal(t, Stats{Paired: workers * ops}, p.Stats())
}

func BenchmarkAddPair(b *testing.B) {
	p := New(Config{})
	s := &auditevent.Event{SessionID: sessionA, SpanID: "sandbox_op_0af7651916cd43dd8448eb211c80319c", Phase: auditevent.PhaseStart}
	f := *s
	f.Phase = auditevent.PhaseFinish
	f.EventID = uuid.UUID{1} // two events, two ids
	buf := make([]Pair, 0, 2)
	b.ReportAllocs()
	for b.Loop() {
		p.Add(buf[:0], s)
		p.Add(buf[:0], &f)
	}
}

// A finish that one span cannot carry together with its start (the span has
// one op, version, trace and parent, and each event needs its own id) makes
// two half spans, so neither event's line changes.
func TestMismatchedFinishGivesTwoHalves(t *testing.T) {
	str := auditevent.Ptr[string]
	cases := []struct {
		name  string
		edit  func(s, f *auditevent.Event)
		pairs bool
	}{
		{"all alike", func(s, f *auditevent.Event) {}, true},
		{"same trace and parent", func(s, f *auditevent.Event) {
			s.TraceID, f.TraceID, s.ParentSpanID, f.ParentSpanID = str("t"), str("t"), str("p"), str("p")
		}, true},
		{"op", func(s, f *auditevent.Event) { f.Op = "read" }, false},
		{"version", func(s, f *auditevent.Event) { f.Version = 2 }, false},
		{"trace null and set", func(s, f *auditevent.Event) { f.TraceID = str("t") }, false},
		{"two traces", func(s, f *auditevent.Event) { s.TraceID, f.TraceID = str("t"), str("u") }, false},
		{"parent set and null", func(s, f *auditevent.Event) { s.ParentSpanID = str("p") }, false},
		{"two parents", func(s, f *auditevent.Event) { s.ParentSpanID, f.ParentSpanID = str("p"), str("q") }, false},
		{"one event id", func(s, f *auditevent.Event) { f.EventID = s.EventID }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, _ := newPairer(10, time.Minute)
			s, f := start(sessionA, "op1"), finish(sessionA, "op1")
			c.edit(s, f)
			p.Add(nil, s)
			out := p.Add(nil, f)
			if c.pairs {
				assert.Equal(t, []string{"op1/op1"}, describe(out))
				assert.Equal(t, Stats{Paired: 1}, p.Stats())
				return
			}
			assert.Equal(t, []string{"op1/-", "-/op1"}, describe(out))
			assert.Equal(t, s.EventID, out[0].Start.EventID)
			assert.Equal(t, f.EventID, out[1].Finish.EventID)
			assert.Equal(t, Stats{Mismatched: 1}, p.Stats())
		})
	}
}
