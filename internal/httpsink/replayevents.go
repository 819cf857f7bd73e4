package httpsink

import (
	"bytes"
	"context"
	"errors"
	"sync"
)

// replayEventsAtOnce is how many spooled events the replayer takes per
// batch in event format, and so the most requests it has in flight.
const replayEventsAtOnce = 16

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
// settled in its own order: the first line not delivered ends the round,
// and other sessions' lines after it that went through are sent again in
// the next (duplicates, as after a timeout; event_id tells them).
func (s *Sink) replayEvents(ctx context.Context, batch []byte, ack func(bytes, lines int)) error {
	lines := splitLines(batch)
	results := make([]replayResult, len(lines))
	var wg sync.WaitGroup
	for _, idx := range bySession(lines) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, i := range idx {
				hv := halver{post: s.replayPost, anyRefusal: true}
				results[i].h, results[i].err = hv.send(ctx, lines[i], 1)
				results[i].tried = true
				if results[i].err != nil {
					return // the session's later lines wait, so its order holds
				}
			}
		}()
	}
	wg.Wait()
	var done halved
	for _, r := range results {
		switch {
		case r.err != nil:
			return r.err
		case !r.tried: // cannot happen: a session stops only after a failure, which comes first
			return errors.New("replay: an event was not sent")
		}
		done = done.then(r.h)
		s.replaySettled(ctx, r.h, done, ack)
	}
	return nil
}

type replayResult struct {
	h     halved
	err   error
	tried bool
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

// sessionOf is the session id of a canonical event line, or "".
func sessionOf(line []byte) string {
	const key = `"session_id":"`
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return ""
	}
	rest := line[i+len(key):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return ""
	}
	return string(rest[:end])
}
