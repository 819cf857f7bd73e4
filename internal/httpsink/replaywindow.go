package httpsink

import (
	"context"
	"slices"
)

// eventWindow is one event-format replay batch in flight: which lines are
// posted, answered and settled. Only replayEvents' goroutine touches it;
// each post runs in its own goroutine and hands its answer back on answers.
type eventWindow struct {
	s        *Sink
	lines    [][]byte
	results  []replayResult
	group    []int  // each line's session
	busy     []bool // per session: a line in flight
	stopped  []bool // per session: a line failed twice, or asked to wait; the rest wait for the next round
	started  []bool // per line
	retried  []bool // per line: posted again after a failure this round
	answers  chan postAnswer
	inFlight int
	limit    int // posts allowed in flight: see newEventWindow
	next     int // no line before it is left to start
	settled  int // lines settled, a prefix of the batch
	done     outcome
	failures int   // failed posts this round
	answered int   // posts the endpoint took or refused this round
	stop     error // the Retry-After that ends the round's posts
}

func newEventWindow(s *Sink, lines [][]byte) *eventWindow {
	group, sessions := sessionGroups(lines)
	w := &eventWindow{
		s: s, lines: lines, group: group,
		results: make([]replayResult, len(lines)),
		busy:    make([]bool, sessions), stopped: make([]bool, sessions),
		started: make([]bool, len(lines)), retried: make([]bool, len(lines)),
		answers: make(chan postAnswer, replayEventsInFlight),
		limit:   replayEventsInFlight,
	}
	if s.probe {
		// After a round that settled nothing the endpoint is likely still
		// failing: one post, and one more per answer (a slow start), rather
		// than a burst of a whole window before the first answer.
		w.limit = 1
	}
	if len(s.ahead) == 0 {
		return w // no line to look up: hashing each one is wasted
	}
	// Identical lines (one event spooled twice) are all settled by one
	// answer: the endpoint has that event.
	for i, l := range lines {
		if h, ok := s.ahead[keyOf(l)]; ok {
			h.settled = len(l)
			w.results[i] = replayResult{h: h, early: true}
			w.started[i] = true
		}
	}
	return w
}

// fill starts the earliest lines whose session is free, in spool order,
// until the window is full or reaches the span past the first unsettled
// line. It starts none once ctx ends; the posts run under postCtx.
func (w *eventWindow) fill(ctx, postCtx context.Context) {
	for w.next < len(w.lines) && w.started[w.next] {
		w.next++
	}
	end := min(len(w.lines), w.settled+replayEventsSpan)
	for i := w.next; i < end && w.inFlight < w.limit; i++ {
		// More failures than answers: an endpoint down or hanging. Each
		// failure stops only its own session, and without this gate a round
		// posted one event of every session to it.
		if w.stop != nil || w.failures > w.answered || ctx.Err() != nil {
			return
		}
		g := w.group[i]
		if w.started[i] || w.busy[g] || w.stopped[g] {
			continue
		}
		w.started[i], w.busy[g] = true, true
		w.inFlight++
		go w.post(postCtx, i)
	}
}

// postAnswer is a post's answer; the post's goroutine hands it over rather
// than writing results, which settle reads meanwhile.
type postAnswer struct {
	i   int
	h   outcome
	err error
}

func (w *eventWindow) post(ctx context.Context, i int) {
	hv := batchPoster{post: w.s.replayPost, anyRefusal: true}
	h, err := hv.send(ctx, w.lines[i], 1)
	w.answers <- postAnswer{i: i, h: h, err: err}
}

// takeAnswers takes the next answer, waiting for it, and any others already
// there, so one settle (one synced offset write) covers them all.
func (w *eventWindow) takeAnswers() {
	w.take(<-w.answers)
	for {
		select {
		case l := <-w.answers:
			w.take(l)
		default:
			return
		}
	}
}

// take records a line's answer. A Retry-After stops the round from
// starting more posts. Otherwise a failed line is posted again once in the
// round: left for the next, it held the acknowledged offset while the
// window delivered a span past it, and a restart sends that again. A
// second failure stops its session for the round, so its order holds.
func (w *eventWindow) take(l postAnswer) {
	w.inFlight--
	w.results[l.i] = replayResult{h: l.h, err: l.err, tried: true}
	g := w.group[l.i]
	w.busy[g] = false
	if l.err == nil {
		w.answered++
		w.limit = min(w.limit+1, replayEventsInFlight)
		w.s.probe = false
		return
	}
	w.failures++
	if w.s.heedRetryAfter(l.err) && w.stop == nil { // heeded even once stopped: the longest wait holds
		w.stop = l.err
	}
	if w.stop == nil && !w.retried[l.i] {
		w.retried[l.i], w.started[l.i] = true, false
		w.next = min(w.next, l.i)
		return
	}
	w.stopped[g] = true
}

// settle counts and logs the newly delivered prefix of the batch, then
// acknowledges it at once: each acknowledgement is a synced write of the
// offset, and a slow line at the head releases up to a span.
func (w *eventWindow) settle(ctx context.Context, ack func(bytes, lines int)) {
	from := w.settled
	for ; w.settled < len(w.lines) && w.results[w.settled].delivered(); w.settled++ {
		r := w.results[w.settled]
		w.done = w.done.plus(r.h)
		if r.early { // only lines found in ahead are in it
			delete(w.s.ahead, keyOf(w.lines[w.settled]))
		}
	}
	if w.settled > from {
		for _, part := range byStatus(w.results[from:w.settled]) {
			w.s.countSettled(ctx, part)
		}
		ack(w.done.settled, w.done.acked+w.done.refused)
	}
}

// byStatus sums results into one part for the lines taken and one per
// status that refused lines, in order of first appearance: one drop
// logged per status, not per line (under a flood of refusals the
// collector's log sampling drops most lines).
func byStatus(results []replayResult) []outcome {
	parts := []outcome{{}}
	for _, r := range results {
		i := 0
		if r.h.refused > 0 {
			i = 1 + slices.IndexFunc(parts[1:], func(p outcome) bool { return p.refusal.Code == r.h.refusal.Code })
			if i == 0 {
				i, parts = len(parts), append(parts, outcome{})
			}
		}
		parts[i] = parts[i].plus(r.h)
	}
	return parts
}

// finish ends the round once nothing is in flight: nil when the whole
// batch settled, or else the error of its first unsettled line, with
// the lines delivered after that one kept in ahead.
func (w *eventWindow) finish() error {
	if w.settled == len(w.lines) {
		return nil
	}
	w.s.rememberAnswered(w.lines[w.settled+1:], w.results[w.settled+1:])
	for _, r := range w.results[w.settled:] {
		if r.err != nil {
			return r.err
		}
	}
	if w.stop != nil {
		return w.stop
	}
	return errNotSent
}
