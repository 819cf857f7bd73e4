package httpsink

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outage answers 503 until a time, counting those posts, and 200 after.
type outage struct {
	until  time.Time
	mu     sync.Mutex
	failed int
}

func (o *outage) behaviour(w http.ResponseWriter, r *http.Request, body []byte) bool {
	if time.Now().Before(o.until) {
		o.mu.Lock()
		o.failed++
		o.mu.Unlock()
		return status(http.StatusServiceUnavailable, nil, "")(w, r, body)
	}
	return ok(w, r, body)
}

func (o *outage) posts() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.failed
}

// The replay window rolls: a slow request holds only its own session, not
// the batch. Settled 64 at a time, every batch waited for its slowest
// request, and a 50–200 ms endpoint drained less than busy sessions posted.
// It rolls no further than its span past the first unsettled line: lines
// beyond that are delivered but unacknowledged, and a restart resends them.
func TestReplayEventsWindowRollsPastASlowRequestWithinItsSpan(t *testing.T) {
	sessions := newSessions(2 * replayEventsSpan)
	slow := eventBody(t, sessions[0], 1)
	var mu sync.Mutex
	answered, answeredMeanwhile := 0, -1
	f := replaySpooled(t, sessions, 1, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		if string(body) == slow {
			mu.Unlock()
			time.Sleep(time.Second) // ample for the others the span allows; under the client's 2 s timeout
			mu.Lock()
			answeredMeanwhile = answered
		}
		answered++
		return ok(w, r, body)
	})

	mu.Lock()
	assert.Equal(t, replayEventsSpan-1, answeredMeanwhile, "requests answered while the first was slow")
	mu.Unlock()
	got := perSession(f.srv.acceptedEvents(t))
	for _, s := range sessions {
		assert.Equal(t, seqRange(1, 1), got[s], "session %s: its event once", s)
	}
	assert.Equal(t, len(sessions), f.obs.stats().replayed)
}

// However many sessions the spool holds, at most replayEventsInFlight
// requests are in flight.
func TestReplayEventsInFlightIsBounded(t *testing.T) {
	sessions := newSessions(2 * replayEventsInFlight)
	var mu sync.Mutex
	inFlight, most := 0, 0
	full := make(chan struct{})
	var fullOnce sync.Once
	f := replaySpooled(t, sessions, 1, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		if inFlight == replayEventsInFlight {
			fullOnce.Do(func() { close(full) })
		}
		mu.Unlock()
		select {
		case <-full:
		case <-time.After(3 * time.Second): // bounded: the test fails on most
		}
		time.Sleep(50 * time.Millisecond) // time for any request past the window to arrive
		mu.Lock()
		inFlight--
		mu.Unlock()
		return ok(w, r, body)
	})

	mu.Lock()
	defer mu.Unlock()
	assert.LessOrEqual(t, most, replayEventsInFlight)
	assert.Greater(t, most, replayEventsInFlight/2, "requests side by side")
	assert.Equal(t, len(sessions), f.obs.stats().replayed)
}

// An endpoint failing every request costs a round at most a window's worth
// of posts, however many sessions the batch holds: each failure stops only
// its own session, so without a stop a round against an endpoint that is
// down posted one event of every session.
func TestReplayEventsRoundAgainstAFailingEndpointPostsOneWindow(t *testing.T) {
	sessions := newSessions(3 * replayEventsInFlight)
	down := &outage{until: time.Now().Add(time.Second)}
	f := replaySpooled(t, sessions, 1, down.behaviour,
		func(set *Settings) { set.ReplayInterval = 2 * time.Second }) // one round before it recovers

	assert.Equal(t, replayEventsInFlight, down.posts(), "posts failed in the round before the endpoint recovered")
	assert.Equal(t, len(sessions), f.obs.stats().replayed)
}

// A line that fails is posted again in the same round, before the window
// moves on: left for the next round, it held the acknowledged offset while
// the window delivered a span past it, which a restart sends again.
func TestReplayEventsFailedLineIsPostedAgainInTheRound(t *testing.T) {
	sessions := newSessions(replayEventsSpan)
	first, last := eventBody(t, sessions[0], 1), eventBody(t, sessions[len(sessions)-1], 1)
	var mu sync.Mutex
	var order []string
	replaySpooled(t, sessions, 1, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		mu.Lock()
		order = append(order, string(body))
		failFirst := string(body) == first && len(slices.DeleteFunc(slices.Clone(order), func(b string) bool { return b != first })) == 1
		mu.Unlock()
		if failFirst {
			return status(http.StatusServiceUnavailable, nil, "")(w, r, body)
		}
		time.Sleep(10 * time.Millisecond) // the failure lands well before the window reaches the span's end
		return ok(w, r, body)
	})

	mu.Lock()
	defer mu.Unlock()
	var posts []int
	for i, b := range order {
		if b == first {
			posts = append(posts, i)
		}
	}
	require.Len(t, posts, 2, "the failed line was posted again")
	assert.Less(t, posts[1], slices.Index(order, last), "posted again before the window reached the span's last line")
}

// Stopped mid-replay, the sink lets the posts in flight land and
// acknowledges what they delivered: cancelled at once, they were taken by
// the endpoint all the same, and a restart sent them again.
func TestReplayEventsShutdownLetsPostsInFlightLand(t *testing.T) {
	sessions := newSessions(replayEventsInFlight)
	path := writeSessions(t, sessions, 2)
	f := newFixture(t, FormatEvent, false, func(s *Settings) { s.Spool = openSpool(t, path, 0) })
	full := make(chan struct{}) // the first window is in: stop now
	var started atomic.Int32
	f.srv.setDefault(func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if started.Add(1) == replayEventsInFlight {
			close(full)
		}
		select { // none lands before the stop, which would start its session's next
		case <-full:
		case <-time.After(5 * time.Second):
		}
		time.Sleep(300 * time.Millisecond) // taken whether or not the client still waits
		return ok(w, r, body)
	})
	f.start(t)
	select {
	case <-full:
	case <-time.After(5 * time.Second):
		t.Fatal("the first window of replay posts never arrived")
	}
	shutdown(t, f)
	require.Eventually(t, func() bool { return len(f.srv.all()) == int(started.Load()) },
		5*time.Second, 10*time.Millisecond, "the endpoint's handlers finish")

	assert.Equal(t, len(sessions), int(started.Load()), "posts started after the stop")
	taken := len(f.srv.acceptedEvents(t))
	require.Positive(t, taken)
	assert.Equal(t, 2*len(sessions)-taken, pendingLines(t, path), "lines left in the spool")
	assert.NoFileExists(t, path+".ahead", "what answers is a prefix: acknowledged, not carried")
}

// pendingLines reopens the spool at path and counts the lines not yet
// acknowledged, acknowledging none.
func pendingLines(t *testing.T, path string) int {
	t.Helper()
	sp := openSpool(t, path, 0)
	defer func() { require.NoError(t, sp.Close()) }()
	n := 0
	_, err := sp.Replay(context.Background(), 1<<20, 1<<30, func(_ context.Context, _ []byte, lines int) error {
		n += lines
		return errors.New("counted, not sent")
	})
	require.Error(t, err)
	return n
}

// A Retry-After stops the round from starting more posts, though other
// sessions' posts are going through; the line that asked is not posted
// again in the round either.
func TestReplayEventsRetryAfterStopsTheRound(t *testing.T) {
	sessions := newSessions(2 * replayEventsInFlight)
	wait := eventBody(t, sessions[0], 1)
	var mu sync.Mutex
	var posted []time.Time
	var asked time.Time
	release := make(chan struct{})
	replaySpooled(t, sessions, 1, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		mu.Lock()
		posted = append(posted, time.Now())
		first := len(posted) <= replayEventsInFlight
		if first && string(body) == wait {
			asked = time.Now()
		}
		mu.Unlock()
		if first && string(body) == wait {
			defer close(release)
			return status(http.StatusTooManyRequests, map[string]string{"Retry-After": "1"}, "")(w, r, body)
		}
		if first {
			select { // the first window is answered just after the one that asks to wait
			case <-release:
				time.Sleep(200 * time.Millisecond)
			case <-time.After(3 * time.Second):
			}
		}
		return ok(w, r, body)
	}, func(set *Settings) { set.Retry.MaxInterval = 10 * time.Second })

	mu.Lock()
	defer mu.Unlock()
	require.False(t, asked.IsZero())
	require.Greater(t, len(posted), replayEventsInFlight)
	for _, at := range posted[replayEventsInFlight:] {
		assert.GreaterOrEqual(t, at.Sub(asked), 700*time.Millisecond, "a post before the Retry-After")
	}
}

// After a round that settled nothing, the next starts with one post and
// widens as answers come: each round against an endpoint still failing
// fired a whole window at it before the first answer.
func TestReplayEventsAfterAFailedRoundProbesWithOnePost(t *testing.T) {
	sessions := newSessions(3 * replayEventsInFlight)
	down := &outage{until: time.Now().Add(1500 * time.Millisecond)}
	f := replaySpooled(t, sessions, 1, down.behaviour, func(set *Settings) {
		set.ReplayInterval = 100 * time.Millisecond
		set.Retry.MaxInterval = 200 * time.Millisecond
	})

	// The first round, not knowing, posts a window; each of the later ones
	// (one every 200 ms at most) one post.
	failed := down.posts()
	assert.LessOrEqual(t, failed, replayEventsInFlight+1500/100)
	assert.Greater(t, failed, replayEventsInFlight, "later rounds probed")
	assert.Equal(t, len(sessions), f.obs.stats().replayed)
}

// Refusals settled together are logged once per status with their count,
// not once per line: under a flood of refusals the collector's log
// sampling kept 11 lines of 200. The metric counts every line.
func TestReplayEventsRefusalsSettledTogetherAreLoggedPerStatus(t *testing.T) {
	sessions := newSessions(6)
	head := eventBody(t, sessions[0], 1)
	refusals := map[string]int{}
	for i, s := range sessions[1:] {
		refusals[eventBody(t, s, 1)] = []int{400, 400, 400, 422, 422}[i]
	}
	var refused atomic.Int32
	f := replaySpooled(t, sessions, 1, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if code, ok := refusals[string(body)]; ok {
			defer refused.Add(1)
			return status(code, nil, "")(w, r, body)
		}
		if string(body) == head { // held until the refusals are in, so one settle takes them all
			for i := 0; i < 300 && refused.Load() < 5; i++ {
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond)
		}
		return ok(w, r, body)
	})

	assert.Equal(t, 5, f.obs.stats().dropped[ReasonHTTP4xx])
	var logged []string
	for _, e := range f.logs.FilterMessageSnippet("refused lines permanently").All() {
		logged = append(logged, fmt.Sprintf("%v×%v", e.ContextMap()["status"], e.ContextMap()["lines"]))
	}
	assert.ElementsMatch(t, []string{"400×3", "422×2"}, logged)
}
