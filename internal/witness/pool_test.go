package witness_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sandboxaudit/sandboxaudit/internal/witness"
	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

type countingObserver struct {
	mu       sync.Mutex
	cosigned map[string]int
	failed   map[string]int // witness/reason
}

func (o *countingObserver) Cosigned(_ context.Context, w string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cosigned[w]++
}

func (o *countingObserver) Failed(_ context.Context, w, reason string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.failed[w+"/"+reason]++
}

func newPool(t *testing.T, quorum int, fakes ...*witnesstest.Fake) (*witness.Pool, *countingObserver, *observer.ObservedLogs) {
	t.Helper()
	return poolOf(t, quorum, witnesstest.Witnesses(t, fakes...)...)
}

// poolOf is a pool of ws that counts what each witness does and keeps
// what it logs.
func poolOf(t *testing.T, quorum int, ws ...*witness.Witness) (*witness.Pool, *countingObserver, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.InfoLevel)
	obs := &countingObserver{cosigned: map[string]int{}, failed: map[string]int{}}
	p, err := witness.NewPool(ws, quorum, zap.New(core), obs)
	require.NoError(t, err)
	return p, obs, logs
}

// Checkpoints as a log grows: each witness is asked once per checkpoint,
// proves from what it cosigned last, and both cosignatures verify.
func TestPoolFollowsTheLog(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	w1 := witnesstest.Start(t, "witness.example/w1", log.verifier)
	w2 := witnesstest.Start(t, "witness.example/w2", log.verifier)
	p, obs, _ := newPool(t, 2, w1, w2)
	ctx := context.Background()
	for round := range 4 {
		log.add(round*3+1, "r")
		signed := log.checkpoint()
		cosigs, quorum := p.Cosign(ctx, "f", log.origin, log.n, signed, log.prover())
		require.True(t, quorum)
		require.Len(t, cosigs, 2)
		rec := append(append([]byte(nil), signed...), cosigs[0]...)
		rec = append(rec, cosigs[1]...)
		require.Equal(t, 2, p.Count(rec))
		require.Equal(t, log.n, w1.Size(log.origin))
		require.Equal(t, log.n, w2.Size(log.origin))
	}
	require.Equal(t, 4, w1.Requests(), "one round trip per checkpoint")
	require.Equal(t, map[string]int{"witness.example/w1": 4, "witness.example/w2": 4}, obs.cosigned)
}

// After a restart the pool does not know what the witness cosigned: the
// witness's 409 names it and the pool proves from there.
func TestPoolLearnsTheSizeFrom409(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	w1 := witnesstest.Start(t, "witness.example/w1", log.verifier)
	p, _, _ := newPool(t, 1, w1)
	log.add(10, "a")
	_, quorum := p.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
	require.True(t, quorum)

	restarted, obs, _ := newPool(t, 1, w1)
	log.add(5, "b")
	_, quorum = restarted.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
	require.True(t, quorum)
	require.Equal(t, 3, w1.Requests(), "the 409, then the retry with a proof from its size")
	require.Equal(t, int64(15), w1.Size(log.origin))
	require.Empty(t, obs.failed)
}

// The key holder rewrites the log and re-signs it: the witness cannot be
// given a proof from what it cosigned, refuses with 422, and the pool
// logs an ERROR and counts it.
func TestPoolRewrittenLogIsRefused(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	w1 := witnesstest.Start(t, "witness.example/w1", log.verifier)
	p, obs, logs := newPool(t, 1, w1)
	log.add(8, "a")
	_, quorum := p.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
	require.True(t, quorum)

	forged := &testLog{t: t, origin: log.origin, signer: log.signer, verifier: log.verifier}
	forged.add(9, "x") // same key, other lines
	cosigs, quorum := p.Cosign(context.Background(), "audit.jsonl", forged.origin, forged.n, forged.checkpoint(), forged.prover())
	require.False(t, quorum)
	require.Empty(t, cosigs)
	require.Equal(t, map[string]int{"witness.example/w1/inconsistent": 1}, obs.failed)
	errs := logs.FilterLevelExact(zapcore.ErrorLevel).All()
	require.Len(t, errs, 1)
	require.Equal(t, "audit.jsonl", errs[0].ContextMap()["path"])
	require.Contains(t, errs[0].ContextMap()["error"], "422")
	require.Equal(t, int64(8), w1.Size(log.origin), "the witness kept what it cosigned")

	// The next round refuses the same way: counted again, logged once.
	_, quorum = p.Cosign(context.Background(), "audit.jsonl", forged.origin, forged.n, forged.checkpoint(), forged.prover())
	require.False(t, quorum)
	require.Equal(t, map[string]int{"witness.example/w1/inconsistent": 2}, obs.failed)
	require.Len(t, logs.FilterLevelExact(zapcore.ErrorLevel).All(), 1)
}

// A log cut back below what the witness cosigned: refused without a
// request the witness would refuse anyway.
func TestPoolCutBackLogIsRefused(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	w1 := witnesstest.Start(t, "witness.example/w1", log.verifier)
	p, _, _ := newPool(t, 1, w1)
	log.add(8, "a")
	_, quorum := p.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
	require.True(t, quorum)
	short := &testLog{t: t, origin: log.origin, signer: log.signer, verifier: log.verifier}
	short.add(5, "a")
	restarted, obs, logs := newPool(t, 1, w1)
	_, quorum = restarted.Cosign(context.Background(), "f", short.origin, short.n, short.checkpoint(), short.prover())
	require.False(t, quorum)
	require.Equal(t, map[string]int{"witness.example/w1/conflict": 1}, obs.failed)
	require.Contains(t, logs.All()[0].ContextMap()["error"], "a tree of 8 lines, more than this checkpoint's")
	require.Equal(t, int64(5), logs.All()[0].ContextMap()["size"])
}

// One witness of two down, quorum 1: cosigned, and the one down is an
// ERROR with a metric, not a silent skip.
func TestPoolQuorumWithOneWitnessDown(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	w1 := witnesstest.Start(t, "witness.example/w1", log.verifier)
	w2 := witnesstest.Start(t, "witness.example/w2", log.verifier)
	w2.SetStatus(http.StatusServiceUnavailable)
	p, obs, logs := newPool(t, 1, w1, w2)
	log.add(3, "a")
	cosigs, quorum := p.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
	require.True(t, quorum)
	require.Len(t, cosigs, 1)
	require.Equal(t, map[string]int{"witness.example/w2/refused": 1}, obs.failed)
	require.Len(t, logs.FilterLevelExact(zapcore.ErrorLevel).All(), 1)
	require.Len(t, p.Verifiers(), 2)
}

func TestNewPoolRefusesABadQuorum(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	w1 := witnesstest.Start(t, "witness.example/w1", log.verifier)
	w, err := witness.NewWitness(w1.URL, w1.VKey, nil, nil)
	require.NoError(t, err)
	for _, q := range []int{0, 2} {
		_, err := witness.NewPool([]*witness.Witness{w}, q, nil, nil)
		require.ErrorContains(t, err, "witness_quorum")
	}
}

// A witness that cannot be reached is not asked again for a while, so a
// round over many files does not wait for it once per file; each skipped
// submission is still counted, and the cause logged once.
func TestPoolRestsAnUnreachableWitness(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	w1 := witnesstest.Start(t, "witness.example/w1", log.verifier)
	srv, calls := countingServer(t, func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close() // no answer at all
		}
	})
	down, err := witness.NewWitness(srv.URL, w1.VKey, nil, nil)
	require.NoError(t, err)
	p, obs, logs := poolOf(t, 1, down)
	log.add(2, "a")
	for range 3 {
		_, quorum := p.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
		require.False(t, quorum)
	}
	require.Equal(t, 1, calls(), "asked once, then rested")
	require.Equal(t, map[string]int{"witness.example/w1/unreachable": 3}, obs.failed)
	errs := logs.FilterLevelExact(zapcore.ErrorLevel).All()
	require.Len(t, errs, 1)
	require.Contains(t, errs[0].ContextMap()["error"], "not asked again for 5s")
}

// A witness that answers nothing before the round's deadline is rested as
// one that cannot be reached; only a round cancelled by the collector
// stopping leaves it unmarked.
func TestPoolRestsAWitnessThatOutlastsTheRound(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	w1 := witnesstest.Start(t, "witness.example/w1", log.verifier)
	srv, calls := countingServer(t, func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // the server watches the connection once the body is read
		select {                           // hangs until the client gives up
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	})
	hanging, err := witness.NewWitness(srv.URL, w1.VKey, nil, nil)
	require.NoError(t, err)
	p, _, _ := poolOf(t, 1, hanging)
	log.add(2, "a")
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_, quorum := p.Cosign(ctx, "f", log.origin, log.n, log.checkpoint(), log.prover())
		cancel()
		require.False(t, quorum)
	}
	require.Equal(t, 1, calls(), "asked once, then rested")
}

// countingServer serves h and reports how many requests it has had.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, func() int) {
	t.Helper()
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() int {
		mu.Lock()
		defer mu.Unlock()
		return calls
	}
}
