package httpsink

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bodyLimit answers 413 to a body over limit bytes, as nginx does over its
// client_max_body_size (1 MiB by default), and to any body holding a line
// it cannot take alone; otherwise 200.
func bodyLimit(limit int) behaviour {
	return func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if len(body) > limit {
			return status(http.StatusRequestEntityTooLarge, nil, "too large")(w, r, body)
		}
		return ok(w, r, body)
	}
}

// Pushes accepted live one at a time, spooled through an outage, are
// joined by the replayer into requests over the endpoint's body limit: the
// 413 halves them until they fit, and every line arrives once, in order.
func TestReplayHalvesABatchTheEndpointFindsTooLarge(t *testing.T) {
	f := newFixture(t, FormatNDJSON, true)
	f.srv.setDefault(bodyLimit(8 << 10))
	f.start(t)
	session := uuid.New()
	f.srv.down()
	for i := range int64(20) { // 20 pushes of 10 lines of ≈ 500 bytes: 5 KiB each, under the limit
		require.NoError(t, f.sink.Send(sendCtx(t), makeLines(t, session, i*10+1, i*10+10, 300), 10))
	}
	f.srv.up()
	f.waitSpoolEmpty(t)
	assert.Equal(t, seqRange(1, 200), seqs(f.srv.acceptedEvents(t)))
	refused := 0
	for _, a := range f.srv.all() {
		if !a.accepted {
			refused++
		}
	}
	assert.NotZero(t, refused, "the replayer's batch got a 413 first")
	st := f.obs.stats()
	assert.Empty(t, st.dropped)
	assert.Equal(t, 200, st.replayed)
}

// Without a spool, a push larger than the endpoint takes is outcome too;
// a line too large on its own is the one line refused (dropped, counted)
// and the lines around it arrive.
func TestLivePushHalvesAndRefusesOnlyTheLineTooLarge(t *testing.T) {
	f := newFixture(t, FormatNDJSON, false)
	session := uuid.New()
	big := makeLines(t, session, 21, 21, 70<<10) // over misconfiguredLimit: too large indeed
	f.srv.setDefault(bodyLimit(8 << 10))
	body := append(append(makeLines(t, session, 1, 20, 300), big...), makeLines(t, session, 22, 40, 300)...)
	err := f.sink.Send(sendCtx(t), body, 40)
	require.Error(t, err, "the refused line is reported")
	var se *StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusRequestEntityTooLarge, se.Code)
	assert.Equal(t, append(seqRange(1, 20), seqRange(22, 40)...), seqs(f.srv.acceptedEvents(t)))
	assert.Equal(t, map[string]int{ReasonHTTP4xx: 1}, f.obs.stats().dropped)
}

// batchPoster.send stops at the first failure that is not a refusal and says
// which prefix it settled, so the caller keeps exactly the rest.
func TestPostHalvingStopsAtAFailureWithTheSettledPrefix(t *testing.T) {
	lines := []byte("a\nb\nc\nd\n")
	calls := 0
	post := func(_ context.Context, body []byte) error {
		calls++
		switch string(body) {
		case "a\nb\nc\nd\n", "c\nd\n":
			return &StatusError{Code: http.StatusRequestEntityTooLarge}
		case "a\nb\n":
			return nil
		case "c\n":
			return &StatusError{Code: http.StatusBadRequest}
		}
		return errors.New("connection reset")
	}
	hv := batchPoster{post: post}
	h, err := hv.send(context.Background(), lines, 4)
	require.EqualError(t, err, "connection reset")
	assert.Equal(t, outcome{acked: 2, refused: 1, refusal: h.refusal, settled: len("a\nb\nc\n")}, h)
	assert.Equal(t, http.StatusBadRequest, h.refusal.Code)
	assert.Equal(t, 5, calls, "whole, first half, second half, c, d")
}

// With http.timeout 0 (a client without a timeout) a replayed request to
// an endpoint that stalls is still bounded: the next round delivers.
func TestReplayBoundsAStalledRequestWithoutAClientTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := newFixture(t, FormatNDJSON, true, func(s *Settings) {
		s.Client = &http.Client{} // no timeout
		s.ReplayRequestTimeout = 100 * time.Millisecond
	})
	f.start(t)
	session := uuid.New()
	f.srv.down()
	require.NoError(t, f.sink.Send(sendCtx(t), makeLines(t, session, 1, 10, 50), 10))
	f.srv.then(hang(release))
	f.srv.up()
	f.waitSpoolEmpty(t)
	assert.Equal(t, seqRange(1, 10), seqs(f.srv.acceptedEvents(t)))
}

// A replayed batch outcome after a 413 whose later half keeps failing
// acknowledges the halves the endpoint took: they are not sent again each
// round while the rest waits.
func TestReplayKeepsTheHalvesTheEndpointTook(t *testing.T) {
	f := newFixture(t, FormatNDJSON, true)
	session := uuid.New()
	stuck := makeLines(t, session, 15, 15, 300)
	f.srv.setDefault(func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if bytes.Contains(body, stuck) {
			if len(body) > 4<<10 {
				return status(http.StatusRequestEntityTooLarge, nil, "")(w, r, body)
			}
			return status(http.StatusServiceUnavailable, nil, "")(w, r, body)
		}
		return ok(w, r, body)
	})
	f.start(t)
	f.srv.down()
	for i := range int64(2) {
		require.NoError(t, f.sink.Send(sendCtx(t), makeLines(t, session, i*10+1, i*10+10, 300), 10))
	}
	f.srv.up()
	// Lines 1-10 go in the first half; 11-15, the half holding the line
	// that keeps failing, are sent again each round (every 20 ms).
	require.Eventually(t, func() bool { return len(f.srv.all()) > 40 }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, seqRange(1, 10), seqs(f.srv.acceptedEvents(t)), "the half the endpoint took, once")
	assert.True(t, f.spool.Pending())
}

// One line the endpoint refuses (400) in a replayed batch is dropped
// alone: the replayer joins pushes whose clients were all acknowledged,
// so the 200 good lines of the batch must not go with it.
func TestReplayDropsOnlyTheLineTheEndpointRefuses(t *testing.T) {
	f := newFixture(t, FormatNDJSON, true)
	session := uuid.New()
	bad := makeLines(t, session, 101, 101, 10)
	f.srv.setDefault(refuseHolding(bad, http.StatusBadRequest, ok))
	f.start(t)
	f.srv.down()
	require.NoError(t, f.sink.Send(sendCtx(t), makeLines(t, session, 1, 100, 10), 100))
	require.NoError(t, f.sink.Send(sendCtx(t), bad, 1))
	require.NoError(t, f.sink.Send(sendCtx(t), makeLines(t, session, 102, 201, 10), 100))
	f.srv.up()
	f.waitSpoolEmpty(t)
	assert.Equal(t, append(seqRange(1, 100), seqRange(102, 201)...), seqs(f.srv.acceptedEvents(t)))
	assert.Equal(t, map[string]int{ReasonHTTP4xx: 1}, f.obs.stats().dropped)
}

// A 413 to a single small line says the endpoint's body limit is broken
// (a proxy misconfigured during a deploy), not that the line is too large:
// the spool keeps its lines, which arrive once the limit is fixed, instead
// of being dropped a line at a time.
func TestA413ToASmallLineKeepsTheSpool(t *testing.T) {
	f := newFixture(t, FormatNDJSON, true)
	f.srv.setDefault(status(http.StatusRequestEntityTooLarge, nil, ""))
	f.start(t)
	session := uuid.New()
	f.srv.down()
	require.NoError(t, f.sink.Send(sendCtx(t), makeLines(t, session, 1, 20, 10), 20))
	f.srv.up()
	require.Eventually(t, func() bool { return len(f.srv.all()) > 60 }, 10*time.Second, 10*time.Millisecond, "rounds go on")
	assert.True(t, f.spool.Pending())
	assert.Empty(t, f.obs.stats().dropped)
	f.srv.setDefault(ok)
	f.waitSpoolEmpty(t)
	assert.Equal(t, seqRange(1, 20), seqs(f.srv.acceptedEvents(t)))
}

// Parts settle one after another before a later one fails: the offset
// moves past each (cumulatively), so the next rounds send only what
// follows them, each settled line arrives or is dropped once, and the
// counters say so.
func TestReplayAcknowledgesEachSettledPartInOrder(t *testing.T) {
	f := newFixture(t, FormatNDJSON, true)
	session := uuid.New()
	bad, stuck := makeLines(t, session, 6, 6, 10), makeLines(t, session, 15, 15, 10)
	f.srv.setDefault(refuseHolding(bad, http.StatusBadRequest, refuseHolding(stuck, http.StatusServiceUnavailable, ok)))
	f.start(t)
	f.srv.down()
	require.NoError(t, f.sink.Send(sendCtx(t), makeLines(t, session, 1, 20, 10), 20))
	f.srv.up()
	// 1-5, 7, 8-10 settle (6 refused); 11-20 keep failing on 15.
	require.Eventually(t, func() bool { return len(f.srv.all()) > 40 }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, append(seqRange(1, 5), seqRange(7, 10)...), seqs(f.srv.acceptedEvents(t)), "each once")
	st := f.obs.stats()
	assert.Equal(t, map[string]int{ReasonHTTP4xx: 1}, st.dropped)
	assert.Equal(t, 9, st.replayed)
	for _, a := range f.srv.all()[len(f.srv.all())-5:] {
		assert.NotContains(t, string(a.body), `"seq":1,`, "a later round starts after the settled parts")
	}
}
