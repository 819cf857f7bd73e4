package witness_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"

	"github.com/sandboxaudit/sandboxaudit/internal/witness"
	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

// An endpoint that echoes the request's headers (a debug service, a
// misrouted proxy) in a 200 or a 409 answer: the error, which is logged,
// shows none of the answer's bytes.
func TestAnswerBytesAreNotShown(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	log.add(3, "a")
	fw := witnesstest.Start(t, "witness.example/w1", log.verifier)
	for _, tc := range []struct {
		status int
		body   string
	}{
		{http.StatusOK, "Authorization: Bearer s3cr3t\n"},
		{http.StatusOK, "\u2014 witness.example/w1 s3cr3t\n"},
		{http.StatusConflict, "s3cr3t\n"},
		{http.StatusConflict, "Authorization: Bearer s3cr3t"},
	} {
		w, _ := witnessAt(t, fw.VKey, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(tc.status)
			_, _ = io.WriteString(w, tc.body)
		})
		_, err := w.AddCheckpoint(context.Background(), 0, nil, log.checkpoint())
		require.Error(t, err)
		require.NotContains(t, err.Error(), "s3cr3t", "%d %q", tc.status, tc.body)
	}
}

// A 409 whose body is no size is the witness's answer, not a witness that
// cannot be reached: counted as a conflict, and asked again next round.
func TestUnreadableConflictIsNotUnreachable(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	log.add(3, "a")
	fw := witnesstest.Start(t, "witness.example/w1", log.verifier)
	w, calls := witnessAt(t, fw.VKey, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/x.tlog.size")
		w.WriteHeader(http.StatusConflict)
		_, _ = io.WriteString(w, strings.Repeat("9", 100)+"\n")
	})
	p, obs, _ := poolOf(t, 1, w)
	p.SetBackoff(witness.Backoff{}) // a refusal is asked again at once; an unreachable witness still rests
	for range 2 {
		_, quorum := p.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
		require.False(t, quorum)
	}
	require.Equal(t, map[string]int{"witness.example/w1/conflict": 2}, obs.failed)
	require.Equal(t, 2, calls(), "not rested as unreachable")
}

// A witness ahead of a log that was cut back: every round refuses the same
// way while the log grows toward the witness's size, and is logged once.
func TestWitnessAheadIsLoggedOnce(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	w1 := witnesstest.Start(t, "witness.example/w1", log.verifier)
	p, _, _ := newPool(t, 1, w1)
	log.add(8, "a")
	_, quorum := p.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
	require.True(t, quorum)

	short := &testLog{t: t, origin: log.origin, signer: log.signer, verifier: log.verifier}
	restarted, obs, logs := newPool(t, 1, w1)
	for range 3 {
		short.add(1, "b")
		_, quorum = restarted.Cosign(context.Background(), "f", short.origin, short.n, short.checkpoint(), short.prover())
		require.False(t, quorum)
	}
	require.Equal(t, map[string]int{"witness.example/w1/conflict": 3}, obs.failed)
	require.Len(t, logs.FilterLevelExact(zapcore.ErrorLevel).All(), 1)
}

// A witness whose 409 body is other junk every round: one cause, logged
// once.
func TestJunkConflictIsLoggedOnce(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	log.add(3, "a")
	fw := witnesstest.Start(t, "witness.example/w1", log.verifier)
	round := 0
	w, _ := witnessAt(t, fw.VKey, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		round++
		w.WriteHeader(http.StatusConflict)
		_, _ = io.WriteString(w, strings.Repeat("x", round)+"\n")
	})
	p, _, logs := poolOf(t, 1, w)
	for range 3 {
		_, quorum := p.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
		require.False(t, quorum)
	}
	require.Len(t, logs.FilterLevelExact(zapcore.ErrorLevel).All(), 1)
}

// A witness that names another size in every 409: given up after a few,
// and counted as a conflict, not as a witness that cannot be reached.
func TestConflictLoopIsAConflict(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	log.add(9, "a")
	fw := witnesstest.Start(t, "witness.example/w1", log.verifier)
	size := 0
	w, calls := witnessAt(t, fw.VKey, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		size = size%8 + 1
		w.WriteHeader(http.StatusConflict)
		_, _ = fmt.Fprintf(w, "%d\n", size)
	})
	p, obs, _ := poolOf(t, 1, w)
	_, quorum := p.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
	require.False(t, quorum)
	require.Equal(t, 4, calls(), "given up after a few")
	require.Equal(t, map[string]int{"witness.example/w1/conflict": 1}, obs.failed)
}

// witnessAt is a witness with the key vkey whose endpoint h serves, and
// how many requests it has had.
func witnessAt(t *testing.T, vkey string, h http.HandlerFunc) (*witness.Witness, func() int) {
	t.Helper()
	srv, calls := countingServer(t, h)
	w, err := witness.NewWitness(srv.URL, vkey, srv.Client(), nil)
	require.NoError(t, err)
	return w, calls
}
