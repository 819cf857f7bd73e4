package httpsink

import (
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// overlapServer answers 200 once a second request is in flight beside the
// one it answers (or after a bounded wait), and records the most requests
// it had in flight at once.
type overlapServer struct {
	mu       sync.Mutex
	inFlight int
	most     int
	two      chan struct{}
	closed   bool
}

func (o *overlapServer) behaviour(w http.ResponseWriter, r *http.Request, b []byte) bool {
	o.mu.Lock()
	o.inFlight++
	if o.inFlight > o.most {
		o.most = o.inFlight
	}
	if o.inFlight == 2 && !o.closed { // the first time only: it can reach 2 again
		o.closed = true
		close(o.two)
	}
	o.mu.Unlock()
	select {
	case <-o.two:
	case <-time.After(3 * time.Second): // one at a time: the test fails on most
	}
	o.mu.Lock()
	o.inFlight--
	o.mu.Unlock()
	return ok(w, r, b)
}

// writeSessions spools n events of each of sessions, interleaved, and
// returns the spool's path.
func writeSessions(t *testing.T, sessions []uuid.UUID, n int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	var all []byte
	for seq := int64(1); seq <= n; seq++ {
		for _, s := range sessions {
			all = append(all, makeLines(t, s, seq, seq, 10)...)
		}
	}
	writeSpool(t, path, all)
	return path
}

// perSession is each session's seqs in the order the endpoint took them.
func perSession(events []auditevent.Event) map[uuid.UUID][]int64 {
	out := map[uuid.UUID][]int64{}
	for _, e := range events {
		out[e.SessionID] = append(out[e.SessionID], e.Seq)
	}
	return out
}

// replaySpooled spools n events of each of sessions, interleaved, starts an
// event-format sink on that spool with answer as the endpoint, and waits
// until the spool is drained.
func replaySpooled(t *testing.T, sessions []uuid.UUID, n int64, answer behaviour, opts ...fixtureOpt) *fixture {
	t.Helper()
	path := writeSessions(t, sessions, n)
	opts = append([]fixtureOpt{func(s *Settings) { s.Spool = openSpool(t, path, 0) }}, opts...)
	f := newFixture(t, FormatEvent, false, opts...)
	f.srv.setDefault(answer)
	f.start(t)
	waitDrained(t, f.sink.spool, path)
	return f
}

func newSessions(n int) []uuid.UUID {
	out := make([]uuid.UUID, n)
	for i := range out {
		out[i] = uuid.New()
	}
	return out
}

// eventBody is the request body the replayer posts for session's event seq.
func eventBody(t *testing.T, session uuid.UUID, seq int64) string {
	t.Helper()
	line := makeLines(t, session, seq, seq, 10)
	return string(line[:len(line)-1])
}

// In event format the replayer posts different sessions' events side by
// side (one at a time it drained a spool slower than live pushes filled
// it), each session's in order.
func TestReplayEventsOfSessionsSideBySide(t *testing.T) {
	sessions := []uuid.UUID{uuid.New(), uuid.New(), uuid.New(), uuid.New()}
	srv := &overlapServer{two: make(chan struct{})}
	f := replaySpooled(t, sessions, 5, srv.behaviour)

	srv.mu.Lock()
	most := srv.most
	srv.mu.Unlock()
	assert.GreaterOrEqual(t, most, 2, "requests in flight at once")
	got := perSession(f.srv.acceptedEvents(t))
	for _, s := range sessions {
		assert.Equal(t, seqRange(1, 5), got[s], "session %s: every event once, in order", s)
	}
	assert.Equal(t, 20, f.obs.stats().replayed)
}

// A failure part-way ends the round at the first line not delivered, in
// the spool's order; the failed session sends nothing past its failure
// until the next round, so its order holds, and other sessions' events
// that went through after that line are not sent again.
func TestReplayEventsSettleInOrder(t *testing.T) {
	a, b := uuid.New(), uuid.New()
	failB2 := eventBody(t, b, 2)
	var once sync.Once
	f := replaySpooled(t, []uuid.UUID{a, b}, 4, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		failed := false
		if string(body) == failB2 {
			once.Do(func() { failed = true })
		}
		if failed {
			return status(http.StatusInternalServerError, nil, "")(w, r, body)
		}
		return ok(w, r, body)
	})

	got := perSession(f.srv.acceptedEvents(t))
	assert.Equal(t, seqRange(1, 4), got[b], "b: in order, each once")
	assert.Equal(t, seqRange(1, 4), got[a], "a: in order, each once")
}

// A line the endpoint keeps failing holds the spool, but the other
// sessions' lines it took in the meantime are not sent again each round.
func TestReplayEventsPoisonLineSendsOthersOnce(t *testing.T) {
	a, b := uuid.New(), uuid.New()
	poison := eventBody(t, a, 1)
	var mu sync.Mutex
	failures := 0
	f := replaySpooled(t, []uuid.UUID{a, b}, 3, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		mu.Lock()
		fail := string(body) == poison && failures < 5
		if fail {
			failures++
		}
		mu.Unlock()
		if fail {
			return status(http.StatusServiceUnavailable, nil, "")(w, r, body)
		}
		return ok(w, r, body)
	})

	mu.Lock()
	assert.Equal(t, 5, failures, "rounds ended at the poison line")
	mu.Unlock()
	got := perSession(f.srv.acceptedEvents(t))
	assert.Equal(t, seqRange(1, 3), got[b], "b: each once, though five rounds failed before its lines were settled")
	assert.Equal(t, seqRange(1, 3), got[a])
	assert.Equal(t, 6, f.obs.stats().replayed)
}

// A line the endpoint refused as content past the failing one is settled
// as refused in the next round (logged and counted as dropped), not as
// delivered.
func TestReplayEventsRefusalAheadIsDropped(t *testing.T) {
	a, b := uuid.New(), uuid.New()
	poison, refused := eventBody(t, a, 1), eventBody(t, b, 2)
	var mu sync.Mutex
	failures, refusals := 0, 0
	f := replaySpooled(t, []uuid.UUID{a, b}, 3, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		switch string(body) {
		case poison:
			if failures < 2 {
				failures++
				return status(http.StatusServiceUnavailable, nil, "")(w, r, body)
			}
		case refused:
			refusals++
			return status(http.StatusBadRequest, nil, "")(w, r, body)
		}
		return ok(w, r, body)
	})

	mu.Lock()
	assert.Equal(t, 1, refusals, "the refused line is posted once")
	mu.Unlock()
	st := f.obs.stats()
	assert.Equal(t, 5, st.replayed)
	assert.Equal(t, 1, st.dropped[ReasonHTTP4xx])
}

func TestSessionOfIsTheTopLevelKey(t *testing.T) {
	s := uuid.New()
	line := makeLines(t, s, 1, 1, 10)
	nested := []byte(strings.Replace(string(line), `"data":{`, `"data":{"session_id":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b",`, 1))
	require.Contains(t, string(nested), `"data":{"session_id":`)
	assert.Equal(t, s.String(), sessionOf(nested))
	assert.Empty(t, sessionOf([]byte(`{"session_id":"short"}`)))
}

// A round that delivered lines before a transient failure is no failed
// round: the next starts at once, not after replay_interval and a growing
// backoff (a few per cent of 503s left a spool draining at a few events a
// second).
func TestReplayAfterProgressDoesNotBackOff(t *testing.T) {
	s := uuid.New()
	failSeq3 := eventBody(t, s, 3)
	var mu sync.Mutex
	failures := 0
	f := replaySpooled(t, []uuid.UUID{s}, 6, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		mu.Lock()
		failed := string(body) == failSeq3 && failures < 2 // twice: once more in the round, then it ends
		if failed {
			failures++
		}
		mu.Unlock()
		if failed {
			return status(http.StatusServiceUnavailable, nil, "")(w, r, body)
		}
		return ok(w, r, body)
	}, func(set *Settings) { set.ReplayInterval = time.Minute })

	assert.Equal(t, seqRange(1, 6), perSession(f.srv.acceptedEvents(t))[s])
}

// A Retry-After on any line of a round is heeded, not only on the first
// line that failed in spool order.
func TestReplayEventsHeedRetryAfterOfAnyLine(t *testing.T) {
	a, b := uuid.New(), uuid.New()
	failA1, waitB1 := eventBody(t, a, 1), eventBody(t, b, 1)
	var mu sync.Mutex
	var b1Posts []time.Time
	failedA1 := false
	replaySpooled(t, []uuid.UUID{a, b}, 2, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		switch string(body) {
		case failA1:
			if !failedA1 {
				failedA1 = true
				return status(http.StatusServiceUnavailable, nil, "")(w, r, body)
			}
		case waitB1:
			b1Posts = append(b1Posts, time.Now())
			if len(b1Posts) == 1 {
				return status(http.StatusTooManyRequests, map[string]string{"Retry-After": "2"}, "")(w, r, body)
			}
		}
		return ok(w, r, body)
	}, func(set *Settings) { set.Retry.MaxInterval = 10 * time.Second }) // Retry-After is capped at the longest pause

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, b1Posts, 2)
	assert.GreaterOrEqual(t, b1Posts[1].Sub(b1Posts[0]), 1500*time.Millisecond, "posted again before its Retry-After")
}
