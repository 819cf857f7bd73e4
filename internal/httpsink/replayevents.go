package httpsink

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// replayEventsAtOnce is how many spooled events the replayer takes per
// batch in event format, and so the most requests it has in flight. With
// 16, an endpoint answering in 50–200 ms took about 80 events/s from the
// spool, less than 150 sessions posting live, and the sink never left it.
const replayEventsAtOnce = 64

// replayBatchLines is the spool batch the replayer asks for: in event
// format several events (posted one per request by replayEvents), in
// ndjson one request's worth.
func (s *Sink) replayBatchLines() int {
	if s.set.Format == FormatEvent {
		return replayEventsAtOnce
	}
	return s.set.MaxBatchLines
}

// replayEvents posts a batch's events one per request (event format),
// different sessions' side by side and each session's in order. One at a
// time, an endpoint with tens of milliseconds of latency drained the
// spool slower than concurrent live pushes had filled it, and as every new
// push queues behind the spool the sink never left it. The batch is
// settled in its own order: the first line not delivered ends the round.
// Other sessions' lines after it that went through are remembered (ahead)
// and settled without a post in the next round, so a line the endpoint
// keeps failing does not send them again every round.
func (s *Sink) replayEvents(ctx context.Context, batch []byte, ack func(bytes, lines int)) error {
	lines := splitLines(batch)
	results := make([]replayResult, len(lines))
	for i, l := range lines {
		if h, ok := s.ahead[string(l)]; ok {
			results[i] = replayResult{h: h, tried: true, early: true}
		}
	}
	var wg sync.WaitGroup
	var hold atomic.Bool // the endpoint asked us to wait (Retry-After)
	for _, idx := range bySession(lines) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, i := range idx {
				if results[i].early {
					continue
				}
				if hold.Load() {
					return
				}
				hv := halver{post: s.replayPost, anyRefusal: true}
				results[i].h, results[i].err = hv.send(ctx, lines[i], 1)
				results[i].tried = true
				if results[i].err != nil {
					hold.CompareAndSwap(false, s.heedRetryAfter(results[i].err))
					return // the session's later lines wait, so its order holds
				}
			}
		}()
	}
	wg.Wait()
	return s.settleEvents(ctx, lines, results, ack)
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

// settleEvents settles results in the batch's order up to the first line
// not delivered, and keeps the lines delivered after it in ahead.
func (s *Sink) settleEvents(ctx context.Context, lines [][]byte, results []replayResult, ack func(bytes, lines int)) error {
	var done halved
	for i, r := range results {
		if r.err != nil || !r.tried {
			s.keepAhead(lines[i+1:], results[i+1:])
			if r.err == nil { // cannot happen: a session stops only after a failure, which comes first
				r.err = errors.New("replay: an event was not sent")
			}
			return r.err
		}
		done = done.then(r.h)
		s.replaySettled(ctx, r.h, done, ack)
		delete(s.ahead, string(lines[i]))
	}
	return nil
}

// keepAhead remembers the lines the endpoint answered after one it did not,
// with their outcome (acknowledged, or refused as content), so the next
// round settles each as it went. Bounded: they lie within the next batch,
// which starts at that line.
func (s *Sink) keepAhead(lines [][]byte, results []replayResult) {
	if len(s.ahead) > 4*replayEventsAtOnce {
		clear(s.ahead) // stale: the spool moved on without settling them
	}
	for i, r := range results {
		if r.tried && r.err == nil && !r.early {
			if s.ahead == nil {
				s.ahead = map[string]halved{}
			}
			s.ahead[string(lines[i])] = r.h
		}
	}
}

type replayResult struct {
	h     halved
	err   error
	tried bool
	early bool // delivered in an earlier round (ahead)
}

// splitLines cuts whole "\n"-terminated lines apart, each keeping its "\n".
func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		line, _ := nextChunk(b, 1, len(b))
		out = append(out, line)
		b = b[len(line):]
	}
	return out
}

// bySession groups line indexes by the session_id of canonical event
// lines, each group in order, groups in order of first appearance. A line
// without one (not a canonical event) joins the group of such lines.
func bySession(lines [][]byte) [][]int {
	var groups [][]int
	index := map[string]int{}
	for i, l := range lines {
		key := sessionOf(l)
		g, ok := index[key]
		if !ok {
			g = len(groups)
			index[key] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
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
