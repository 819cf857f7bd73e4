package httpsink

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"time"
)

const (
	// replayEventsInFlight is the most event-format requests the replayer
	// has in flight. Posted one at a time, an endpoint with tens of
	// milliseconds of latency would drain the spool slower than concurrent
	// live pushes (which queue behind it) fill it.
	replayEventsInFlight = 64
	// replayEventsSpan bounds how far past the first unsettled line the
	// window may post. Lines delivered beyond that line are acknowledged
	// only in memory (ahead, saved on a clean stop), so a crash sends them
	// again; the bound keeps that to a few windows. Four windows let a slow
	// request at the head be overtaken.
	replayEventsSpan = 4 * replayEventsInFlight
	// replayEventsPerBatch is the spool batch the replayer takes in event
	// format. The window rolls within a batch and waits for its slowest
	// request only at the batch's end, so the batch is many windows long
	// (settled a window at a time, a 50–200 ms endpoint is slow to drain).
	replayEventsPerBatch = 1024
	// replayStopGrace is how long posts in flight may still land once the
	// replayer is stopped (less if Shutdown's ctx ends first). Cancelled at
	// once, a SIGTERM during replay would resend up to a window of events
	// the endpoint had already taken.
	replayStopGrace = 2 * time.Second
)

// replayBatchLines is the spool batch the replayer asks for: in event
// format many events (posted one per request by replayEvents), in ndjson
// one request's worth.
func (s *Sink) replayBatchLines() int {
	if s.set.Format == FormatEvent {
		return replayEventsPerBatch
	}
	return s.set.MaxBatchLines
}

// replayEvents posts a batch's events one per request (event format) in a
// window of replayEventsInFlight requests that rolls in spool order:
// different sessions' events side by side, each session's in order. Each
// prefix of the batch is acknowledged as soon as it is settled (see
// eventWindow for failures). The first line not delivered ends the round.
// Other sessions' lines after it that went through are remembered (ahead)
// and settled without a post in the next round, so a line the endpoint
// keeps failing does not send them again every round.
func (s *Sink) replayEvents(ctx context.Context, batch []byte, ack func(bytes, lines int)) error {
	w := newEventWindow(s, splitLines(batch))
	postCtx, cancel := withGrace(ctx, replayStopGrace)
	defer cancel()
	defer context.AfterFunc(s.abortCtx, cancel)()
	w.settle(ctx, ack) // a head settled in an earlier round needs no post
	w.fill(ctx, postCtx)
	for w.inFlight > 0 {
		w.takeAnswers()
		w.settle(ctx, ack)
		w.fill(ctx, postCtx)
	}
	return w.finish()
}

// withGrace is a context that ends grace after ctx does (or when cancel is
// called), for work already under way when ctx ends.
func withGrace(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	gctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-t.C:
		case <-gctx.Done():
		}
		cancel()
	})
	return gctx, func() { stop(); cancel() }
}

// heedRetryAfter holds the replayer back for err's Retry-After, if it has
// one, and reports whether it did. The round's error is the first failed
// line's in spool order, which need not be the answer that asked to wait.
func (s *Sink) heedRetryAfter(err error) bool {
	nb := notBeforeOf(err)
	if nb.IsZero() {
		return false
	}
	s.markDown(err, nb)
	return true
}

// lineKey identifies a spooled line in ahead: a digest, so what ahead
// holds does not grow with the lines' size.
type lineKey [sha256.Size]byte

func keyOf(line []byte) lineKey { return sha256.Sum256(line) }

// rememberAnswered keeps in ahead the lines the endpoint answered after
// one it did not, with their outcome (acknowledged, or refused as
// content), so the next round settles each as it went. Bounded: they lie
// within the span past that line.
func (s *Sink) rememberAnswered(lines [][]byte, results []replayResult) {
	if len(s.ahead) > aheadLimit-replayEventsSpan {
		clear(s.ahead) // stale: the spool moved on without settling them
	}
	for i, r := range results {
		if r.tried && r.err == nil && !r.early {
			if s.ahead == nil {
				s.ahead = map[lineKey]outcome{}
			}
			s.ahead[keyOf(lines[i])] = r.h
		}
	}
}

type replayResult struct {
	h     outcome
	err   error
	tried bool // answered in this round
	early bool // delivered in an earlier round (ahead)
}

func (r replayResult) delivered() bool { return (r.tried || r.early) && r.err == nil }

// splitLines cuts whole "\n"-terminated lines apart, each keeping its "\n".
func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		line, _ := nextBatch(b, 1, len(b))
		out = append(out, line)
		b = b[len(line):]
	}
	return out
}

// sessionGroups numbers the sessions of lines (see sessionOf) in order of
// first appearance and returns each line's number and how many there are.
// Lines without one (not canonical events) share a number.
func sessionGroups(lines [][]byte) (group []int, n int) {
	group = make([]int, len(lines))
	index := map[string]int{}
	for i, l := range lines {
		key := sessionOf(l)
		g, ok := index[key]
		if !ok {
			g = len(index)
			index[key] = g
		}
		group[i] = g
	}
	return group, len(index)
}

// sessionOf is the session id of a canonical event line, or "". Keys are
// sorted, so data (which may hold a "session_id" of its own) comes first
// and the top-level key is the last: only strings, numbers and null
// follow it, and a quote inside a string is escaped.
func sessionOf(line []byte) string {
	const key = `"session_id":"`
	i := bytes.LastIndex(line, []byte(key))
	if i < 0 || len(line) < i+len(key)+37 || line[i+len(key)+36] != '"' {
		return ""
	}
	return string(line[i+len(key) : i+len(key)+36])
}

// errNotSent ends a round whose first unsettled line was never posted:
// the round stopped starting requests before it got there.
var errNotSent = errors.New("replay: an event was not sent")
