package sandboxauditexporter

import (
	"context"
	"encoding/binary"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// earlyExecStart is the write-ahead record the instrumentation sends
// for the exec span of sampleSpans before the exec runs.
func earlyExecStart() plog.Logs {
	ld := plog.NewLogs()
	r := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	r.SetEventName("sandbox.session.start")
	r.Body().SetStr(execStartJSON())
	r.Attributes().PutStr("sandbox.session.id", sessionA)
	r.Attributes().PutStr("sandbox.operation", "exec")
	return ld
}

func TestStartEventWrittenOnceAcrossSignals(t *testing.T) {
	for _, logsFirst := range []bool{true, false} {
		name := "span first"
		if logsFirst {
			name = "log record first"
		}
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "events.jsonl")
			cfg := syncConfig()
			withFile(cfg, path, auditevent.PolicyOverride{})
			te := startExporters(t, cfg)
			ctx := context.Background()
			span := buildTraces(t, sampleSpans()[0])
			if logsFirst {
				require.NoError(t, te.logs.ConsumeLogs(ctx, earlyExecStart()))
				require.NoError(t, te.traces.ConsumeTraces(ctx, span))
				assert.Equal(t, []string{
					canonical(t, execStartJSON()),
					canonical(t, execFinishJSON("null", "null")),
				}, readLines(t, path))
			} else {
				require.NoError(t, te.traces.ConsumeTraces(ctx, span))
				require.NoError(t, te.logs.ConsumeLogs(ctx, earlyExecStart()))
				assert.Equal(t, []string{
					canonical(t, execStartJSON()),
					canonical(t, execFinishJSON("null", "null")),
				}, readLines(t, path))
			}
			// A resent span writes neither start again; its finish is not
			// windowed here (only one copy of it is ever produced, and the
			// file-leg window needs an HTTP sink).
			require.NoError(t, te.traces.ConsumeTraces(ctx, buildTraces(t, sampleSpans()[0])))
			assert.Len(t, readLines(t, path), 3)
		})
	}
}

func TestStartIDsForgetAfterAFailedWrite(t *testing.T) {
	s := newStartIDs()
	a, b := uuid.New(), uuid.New()
	events := []auditevent.Event{
		{EventID: a, Phase: auditevent.PhaseStart},
		{EventID: uuid.New(), Phase: auditevent.PhaseFinish},
		{EventID: a, Phase: auditevent.PhaseStart}, // same batch, second copy
		{EventID: b, Phase: auditevent.PhaseStart},
	}
	ctx := context.Background()
	kept, held, dropped, err := s.filter(ctx, events)
	require.NoError(t, err)
	require.Len(t, kept, 3)
	assert.Equal(t, 1, dropped)
	assert.Equal(t, []uuid.UUID{a, b}, flightIDs(held))

	s.done(held, errors.New("write failed")) // a retry must write both again
	kept, held, dropped, err = s.filter(ctx, []auditevent.Event{{EventID: a, Phase: auditevent.PhaseStart}, {EventID: b, Phase: auditevent.PhaseStart}})
	require.NoError(t, err)
	s.done(held, nil)
	assert.Len(t, kept, 2)
	assert.Zero(t, dropped)
	assert.Equal(t, eventIDWindow, s.w.Size())
}

// BenchmarkStartIDsFilter is the window's cost per 512-event batch (256
// starts), the window already full: the price of writing each start once.
// Ids come from a counter, so the figure is the window's, not crypto/rand's.
func BenchmarkStartIDsFilter(b *testing.B) {
	s := newStartIDs()
	var n uint64
	next := func() uuid.UUID {
		n++
		var id uuid.UUID
		binary.BigEndian.PutUint64(id[8:], n)
		return id
	}
	for range eventIDWindow {
		s.w.Add(next())
	}
	work := make([]auditevent.Event, 512)
	b.ReportAllocs()
	for b.Loop() {
		for i := range work {
			work[i] = auditevent.Event{EventID: next(), Phase: auditevent.Phase(1 + i%2)}
		}
		kept, held, _, err := s.filter(context.Background(), work)
		if err != nil || len(kept) != 512 {
			b.Fatal(len(kept), err)
		}
		s.done(held, nil)
	}
}

// filter drops the starts the window holds, keeps everything else in
// order, reports what it added, and clears the slots it freed.
func TestStartIDsFilterKeepsOrder(t *testing.T) {
	id := func(n byte) uuid.UUID { return uuid.UUID{15: n} }
	ev := func(n byte, p auditevent.Phase) auditevent.Event {
		return auditevent.Event{EventID: id(n), Phase: p, Op: "exec"}
	}
	s := newStartIDs()
	s.w.Add(id(3)) // start 3 was written ahead
	events := []auditevent.Event{
		ev(1, auditevent.PhaseStart), ev(2, auditevent.PhaseFinish),
		ev(3, auditevent.PhaseStart), ev(4, auditevent.PhaseFinish),
		ev(5, auditevent.PhaseStart), ev(6, auditevent.PhaseFinish),
	}
	kept, added, dropped, err := s.filter(context.Background(), events)
	require.NoError(t, err)
	s.done(added, nil)
	var keptIDs []uuid.UUID
	for _, e := range kept {
		keptIDs = append(keptIDs, e.EventID)
	}
	assert.Equal(t, []uuid.UUID{id(1), id(2), id(4), id(5), id(6)}, keptIDs)
	assert.Equal(t, []uuid.UUID{id(1), id(5)}, flightIDs(added))
	assert.Equal(t, 1, dropped)
	assert.Equal(t, auditevent.Event{}, events[5], "the freed slot keeps nothing alive")

	// The same batch again: every start is now known.
	again := []auditevent.Event{ev(1, auditevent.PhaseStart), ev(2, auditevent.PhaseFinish)}
	kept, added, dropped, err = s.filter(context.Background(), again)
	require.NoError(t, err)
	assert.Len(t, kept, 1)
	assert.Equal(t, id(2), kept[0].EventID)
	assert.Empty(t, flightIDs(added))
	assert.Equal(t, 1, dropped)
}

// A batch waiting for another write of its ids holds none of them, so two
// batches carrying the same ids in opposite order, or a span's start and
// finish in two batches, never wait on each other: a third batch takes an
// id the waiter also wants while the waiter waits. A hang would end at
// the contexts' deadlines and fail the test.
func TestStartIDsWaiterHoldsNothing(t *testing.T) {
	s := newStartIDs()
	s.finishes.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start, finish, other := uuid.New(), uuid.New(), uuid.New()
	ev := func(id uuid.UUID, ph auditevent.Phase) auditevent.Event {
		return auditevent.Event{EventID: id, Phase: ph}
	}

	_, heldA, _, err := s.filter(ctx, []auditevent.Event{ev(start, auditevent.PhaseStart), ev(finish, auditevent.PhaseFinish)})
	require.NoError(t, err)

	waiting := make(chan struct{})
	var once sync.Once
	s.waiting = func() { once.Do(func() { close(waiting) }) }
	type result struct {
		kept []auditevent.Event
		held *flight
		err  error
	}
	b := make(chan result, 1)
	go func() {
		kept, held, _, err := s.filter(ctx, []auditevent.Event{
			ev(finish, auditevent.PhaseFinish), ev(other, auditevent.PhaseStart), ev(start, auditevent.PhaseStart),
		})
		b <- result{kept, held, err}
	}()
	<-waiting

	_, heldC, _, err := s.filter(ctx, []auditevent.Event{ev(other, auditevent.PhaseStart)})
	require.NoError(t, err, "the waiter holds nothing")
	s.done(heldC, nil)
	s.done(heldA, errors.New("write failed"))

	got := <-b
	require.NoError(t, got.err)
	assert.Equal(t, []uuid.UUID{finish, start}, flightIDs(got.held), "the failed write's ids go to the waiter; the written one is a duplicate")
	assert.Len(t, got.kept, 2)
	s.done(got.held, nil)
}

// flightIDs are the ids f added to the window (none for no flight).
func flightIDs(f *flight) []uuid.UUID {
	if f == nil {
		return nil
	}
	return f.ids
}
