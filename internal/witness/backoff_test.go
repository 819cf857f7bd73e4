package witness_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"

	"github.com/sandboxaudit/sandboxaudit/internal/witness"
	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

// A witness that keeps answering 5xx is not asked once per waiting file
// and round: it pauses. Each checkpoint it is not asked about is still
// counted as a failure, and its cause logged once for every log: it
// fails itself, not one log.
func TestPoolPausesAFailingWitness(t *testing.T) {
	w1 := witnesstest.Start(t, "witness.example/w1", nil)
	w1.SetStatus(http.StatusServiceUnavailable)
	p, obs, logs := newPool(t, 1, w1)
	for round := range 3 {
		for _, origin := range []string{"example.com/a", "example.com/b"} {
			log := newTestLog(t, origin)
			log.add(2, "x")
			_, quorum := p.Cosign(context.Background(), origin+".jsonl", origin, log.n, log.checkpoint(), log.prover())
			require.False(t, quorum, "round %d", round)
		}
	}
	require.Equal(t, 1, w1.Requests(), "asked once, then paused")
	require.Equal(t, map[string]int{"witness.example/w1/refused": 6}, obs.failed)
	require.Len(t, logs.FilterLevelExact(zapcore.ErrorLevel).All(), 1, "once for every log")
}

// A witness down for many {session_id} logs is one ERROR, not one per log
// (which the collector's log sampler would thin out, each never logged
// again); once it cosigns again, its next failure is logged anew.
func TestPoolLogsAWitnessThatFailsItselfOnceForAllLogs(t *testing.T) {
	var ls []*testLog
	for k := range 40 {
		l := newTestLog(t, fmt.Sprintf("example.com/session-%d", k))
		l.add(2, "x")
		ls = append(ls, l)
	}
	w1 := witnesstest.Start(t, "witness.example/w1", ls[0].verifier)
	w1.SetStatus(http.StatusServiceUnavailable)
	p, obs, logs := newPool(t, 1, w1)
	clock := withClock(p, witness.Backoff{First: time.Second, Limit: time.Second})
	for _, l := range ls {
		clock.add(2 * time.Second) // past each pause: every log's checkpoint asks
		_, quorum := p.Cosign(context.Background(), l.origin+".jsonl", l.origin, l.n, l.checkpoint(), l.prover())
		require.False(t, quorum)
	}
	require.Equal(t, 40, w1.Requests())
	require.Equal(t, 40, obs.failed["witness.example/w1/refused"])
	require.Len(t, logs.FilterLevelExact(zapcore.ErrorLevel).All(), 1, "one ERROR for the witness")

	w1.SetStatus(0)
	clock.add(2 * time.Second)
	_, quorum := p.Cosign(context.Background(), ls[0].origin+".jsonl", ls[0].origin, ls[0].n, ls[0].checkpoint(), ls[0].prover())
	require.True(t, quorum)
	w1.SetStatus(http.StatusServiceUnavailable)
	clock.add(2 * time.Second)
	_, quorum = p.Cosign(context.Background(), ls[1].origin+".jsonl", ls[1].origin, ls[1].n, ls[1].checkpoint(), ls[1].prover())
	require.False(t, quorum)
	require.Len(t, logs.FilterLevelExact(zapcore.ErrorLevel).All(), 2, "down again after a cosignature: logged again")
}

// testClock is a clock a test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

// withClock sets p's backoff b, timed by a testClock it returns.
func withClock(p *witness.Pool, b witness.Backoff) *testClock {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	b.Now = clock.Now
	p.SetBackoff(b)
	return clock
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// The pause starts at the backoff's first, doubles after each failure up
// to its limit, and a cosignature ends it.
func TestPoolPauseDoublesAndEndsOnACosignature(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	w1 := witnesstest.Start(t, "witness.example/w1", log.verifier)
	p, _, logs := newPool(t, 1, w1)
	clock := withClock(p, witness.Backoff{First: time.Minute, Limit: 4 * time.Minute})
	log.add(2, "a")
	cosign := func() bool {
		_, quorum := p.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
		return quorum
	}
	w1.SetStatus(http.StatusInternalServerError)
	asked := func(want int, after time.Duration) {
		t.Helper()
		clock.add(after)
		cosign()
		require.Equal(t, want, w1.Requests(), "after %s more", after)
	}
	asked(1, 0)
	for _, pause := range []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 4 * time.Minute} {
		asked(w1.Requests(), pause-time.Second) // still paused
		asked(w1.Requests()+1, time.Second)     // asked again, failed again
	}
	require.Contains(t, logs.All()[0].ContextMap()["error"], "not asked again for 1m0s, twice as long after each next failure, up to 4m0s")

	w1.SetStatus(0)
	clock.add(4 * time.Minute)
	require.True(t, cosign())
	w1.SetStatus(http.StatusInternalServerError)
	log.add(1, "b")
	asked(w1.Requests()+1, 0)
	asked(w1.Requests()+1, time.Minute) // the pause started again from the first
}

// A witness that refuses one log (it does not know its origin) pauses
// for that log only: it goes on cosigning the others every round.
func TestPoolPausesARefusalForItsLogOnly(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	w1 := witnesstest.Start(t, "witness.example/w1", log.verifier)
	p, obs, _ := newPool(t, 1, w1)
	log.add(8, "a")
	_, quorum := p.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
	require.True(t, quorum)
	forged := &testLog{t: t, origin: log.origin, signer: log.signer, verifier: log.verifier}
	forged.add(9, "x")
	other := &testLog{t: t, origin: "example.com/other", signer: log.signer, verifier: log.verifier}
	for round := range 3 {
		_, quorum := p.Cosign(context.Background(), "f", forged.origin, forged.n, forged.checkpoint(), forged.prover())
		require.False(t, quorum)
		other.add(1, "o")
		_, quorum = p.Cosign(context.Background(), "g", other.origin, other.n, other.checkpoint(), other.prover())
		require.True(t, quorum, "round %d", round)
	}
	require.Equal(t, 2+3, w1.Requests(), "the rewritten log asked once, the other every round")
	require.Equal(t, map[string]int{"witness.example/w1/inconsistent": 3}, obs.failed)
}

// A round that ran out of its own time (its deadline passed while other
// files were submitted) says nothing about a witness: it is asked again
// at the next round, not paused as one that failed.
func TestPoolDoesNotPauseAWitnessForTheRoundsDeadline(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	w1 := witnesstest.Start(t, "witness.example/w1", log.verifier)
	p, _, _ := newPool(t, 1, w1)
	withClock(p, witness.Backoff{First: time.Minute, Limit: 4 * time.Minute})
	log.add(2, "a")
	late, cancel := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer cancel()
	_, quorum := p.Cosign(late, "f", log.origin, log.n, log.checkpoint(), log.prover())
	require.False(t, quorum)
	_, quorum = p.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
	require.True(t, quorum, "asked again at once")
}

// With one witness paused and the other cosigning, a checkpoint short of
// the quorum is submitted every round; the witness that cosigned it is
// not asked about it again (its cosignature is returned as received, not
// counted again): else every waiting file would cost it a request each
// round for as long as the other stays down.
func TestPoolDoesNotAskAgainAWitnessThatCosignedTheCheckpoint(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	w1 := witnesstest.Start(t, "witness.example/w1", log.verifier)
	w2 := witnesstest.Start(t, "witness.example/w2", log.verifier)
	w2.SetStatus(http.StatusServiceUnavailable)
	p, obs, _ := newPool(t, 2, w1, w2)
	clock := withClock(p, witness.Backoff{First: time.Second, Limit: time.Minute})
	log.add(4, "a")
	var first []byte
	for round := range 5 {
		cosigs, quorum := p.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
		require.False(t, quorum, "round %d", round)
		require.Len(t, cosigs, 1, "round %d: w1's cosignature", round)
		if first == nil {
			first = cosigs[0]
		}
		require.Equal(t, first, cosigs[0])
		clock.add(time.Minute)
	}
	require.Equal(t, 1, w1.Requests(), "w1 cosigned the checkpoint once")
	require.Equal(t, 1, obs.cosigned["witness.example/w1"])
	require.Equal(t, 5, w2.Requests(), "w2 asked again after each pause")

	w2.SetStatus(0)
	cosigs, quorum := p.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
	require.True(t, quorum)
	require.Len(t, cosigs, 2)
	log.add(1, "b")
	_, quorum = p.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
	require.True(t, quorum)
	require.Equal(t, 2, w1.Requests(), "a new checkpoint is asked for")
}

// Rounds come every Round, and a request fails some time into its round
// (a timeout, say): the round due when a pause ends asks the witness, not
// the one after, so a pause of one round skips none and the doubling
// counts rounds. A witness back up is asked again when the pause says.
func TestPoolPauseEndsAtTheRoundDue(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	w1 := witnesstest.Start(t, "witness.example/w1", log.verifier)
	p, _, _ := newPool(t, 1, w1)
	clock := withClock(p, witness.Backoff{First: time.Minute, Limit: 10 * time.Minute, Round: time.Minute})
	log.add(2, "a")
	w1.SetStatus(http.StatusServiceUnavailable)
	// round submits at its start plus latency; the request fails then.
	round := func(latency time.Duration) {
		clock.add(latency)
		p.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
		clock.add(time.Minute - latency)
	}
	round(10 * time.Second) // fails: paused for one round
	var asked []int
	for range 8 {
		round(0)
		asked = append(asked, w1.Requests())
	}
	// Asked in the next round, then after pauses of 2 and 4 rounds.
	require.Equal(t, []int{2, 2, 3, 3, 3, 3, 4, 4}, asked)
}

// A checkpoint of the same size and origin as the one a witness cosigned,
// over another tree (a log reset, or a fork), is no cosigned checkpoint:
// the witness is asked, and its refusal stands.
func TestPoolAsksAgainAboutAnotherTreeOfTheSameSize(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	w1 := witnesstest.Start(t, "witness.example/w1", log.verifier)
	p, _, _ := newPool(t, 1, w1)
	log.add(4, "a")
	_, quorum := p.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
	require.True(t, quorum)

	fork := *log
	fork.hashes, fork.n = nil, 0
	fork.add(4, "b")
	cosigs, quorum := p.Cosign(context.Background(), "f", fork.origin, fork.n, fork.checkpoint(), fork.prover())
	require.False(t, quorum)
	require.Empty(t, cosigs, "no cosignature of the first tree stands for the second")
	require.Equal(t, 2, w1.Requests(), "the witness is asked about the second tree")
}

// A witness that does not know the logs of a templated path refuses each
// (404): the first is logged at once, naming its origin; the next are
// summed up at most once a minute, with their count and one origin, not
// one ERROR each; every refusal is still counted.
func TestPoolSumsUpTheLogsAWitnessRefuses(t *testing.T) {
	key, ls := sessionLogs(t, 40)
	w1 := witnesstest.Start(t, "witness.example/w1", key.verifier)
	w1.SetStatus(http.StatusNotFound)
	p, obs, logs := newPool(t, 1, w1)
	clock := withClock(p, witness.Backoff{First: time.Second, Limit: time.Second})
	cosignAll := func(ls []*testLog) {
		t.Helper()
		for _, l := range ls {
			_, quorum := p.Cosign(context.Background(), l.origin+".jsonl", l.origin, l.n, l.checkpoint(), l.prover())
			require.False(t, quorum)
		}
	}
	cosignAll(ls[:30])
	errs := logs.FilterLevelExact(zapcore.ErrorLevel).All()
	require.Len(t, errs, 1, "the first log at once, the next summed up")
	require.Equal(t, "example.com/session-0", errs[0].ContextMap()["origin"])
	require.Contains(t, errs[0].ContextMap()["error"], "404")

	clock.add(time.Minute)
	cosignAll(ls) // 30 refused again (not news), 10 more
	errs = logs.FilterLevelExact(zapcore.ErrorLevel).All()
	require.Len(t, errs, 2)
	sum := errs[1].ContextMap()
	require.Contains(t, errs[1].Message, "more logs for the same cause")
	require.Equal(t, "witness.example/w1", sum["witness"])
	require.Equal(t, int64(29), sum["new_logs"], "the 29 refused after the first, within the minute")
	require.Equal(t, int64(30), sum["logs_refused"])
	require.Equal(t, "example.com/session-29", sum["origin"])
	require.Contains(t, sum["error"], "404")

	clock.add(time.Minute)
	cosignAll(ls[:1])
	errs = logs.FilterLevelExact(zapcore.ErrorLevel).All()
	require.Len(t, errs, 3, "the 10 refused since, once the minute passed")
	require.Equal(t, int64(10), errs[2].ContextMap()["new_logs"])
	require.Equal(t, int64(40), errs[2].ContextMap()["logs_refused"])
	require.Equal(t, 30+40+1, obs.failed["witness.example/w1/unknown_log"], "every refusal counted")
}

// A log a witness refused, then cosigned (the operator added it to the
// witness), is said to be back: at once when it was the last one refused
// for that cause, and its next refusal is logged at once again.
func TestPoolSaysALogARefusingWitnessCosignsAgainIsBack(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	log.add(2, "a")
	w1 := witnesstest.Start(t, "witness.example/w1", log.verifier)
	w1.SetStatus(http.StatusNotFound)
	p, _, logs := newPool(t, 1, w1)
	clock := withClock(p, witness.Backoff{First: time.Second, Limit: time.Second})
	cosign := func() bool {
		_, quorum := p.Cosign(context.Background(), "audit.jsonl", log.origin, log.n, log.checkpoint(), log.prover())
		return quorum
	}
	require.False(t, cosign())
	w1.SetStatus(0)
	clock.add(2 * time.Second)
	require.True(t, cosign())
	infos := logs.FilterLevelExact(zapcore.InfoLevel).All()
	require.Len(t, infos, 1)
	require.Equal(t, "integrity: witness cosigns again logs it had refused", infos[0].Message)
	require.Equal(t, "example.com/log", infos[0].ContextMap()["origin"])
	require.Equal(t, int64(1), infos[0].ContextMap()["logs_back"])
	require.Equal(t, int64(0), infos[0].ContextMap()["logs_refused"])

	w1.SetStatus(http.StatusNotFound)
	log.add(1, "b")
	require.False(t, cosign())
	require.Len(t, logs.FilterLevelExact(zapcore.ErrorLevel).All(), 2, "refused again: logged at once")
}

// A witness that failed for every log and cosigns again is said to be
// back, once.
func TestPoolSaysAWitnessThatFailedItselfIsBack(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	log.add(2, "a")
	w1 := witnesstest.Start(t, "witness.example/w1", log.verifier)
	w1.SetStatus(http.StatusServiceUnavailable)
	p, _, logs := newPool(t, 1, w1)
	clock := withClock(p, witness.Backoff{First: time.Second, Limit: time.Second})
	_, quorum := p.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
	require.False(t, quorum)
	w1.SetStatus(0)
	for range 2 {
		clock.add(2 * time.Second)
		log.add(1, "b")
		_, quorum = p.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
		require.True(t, quorum)
	}
	infos := logs.FilterLevelExact(zapcore.InfoLevel).All()
	require.Len(t, infos, 1)
	require.Equal(t, "integrity: witness cosigns again (it had failed for every log)", infos[0].Message)
}

// TestPoolNamesEachLogAWitnessSaysWasRewritten: a 422 (the log's tree does
// not extend what the witness cosigned) is what an attack on that log looks
// like, so each log so refused is named at once, not summed up.
func TestPoolNamesEachLogAWitnessSaysWasRewritten(t *testing.T) {
	key, ls := sessionLogs(t, 5)
	w1 := witnesstest.Start(t, "witness.example/w1", key.verifier)
	w1.SetStatus(http.StatusUnprocessableEntity)
	p, _, logs := newPool(t, 1, w1)
	for _, l := range ls {
		_, quorum := p.Cosign(context.Background(), l.origin+".jsonl", l.origin, l.n, l.checkpoint(), l.prover())
		require.False(t, quorum)
	}
	errs := logs.FilterLevelExact(zapcore.ErrorLevel).All()
	require.Len(t, errs, len(ls), "one line per log")
	for k, e := range errs {
		require.Equal(t, ls[k].origin, e.ContextMap()["origin"])
		require.Contains(t, e.ContextMap()["error"], "history rewritten")
	}
}

// TestPoolNamesEachLogAWitnessHoldsAnotherTreeOf: a 409 naming the size
// the log gave (the witness holds another tree of that size: history
// rewritten or forked) is an attack on that log as a 422 is, so each log
// so refused is named at once, even when the logs share a size.
func TestPoolNamesEachLogAWitnessHoldsAnotherTreeOf(t *testing.T) {
	key, ls := sessionLogs(t, 5)
	w1 := witnesstest.Start(t, "witness.example/w1", key.verifier)
	p, _, logs := newPool(t, 1, w1)
	for _, l := range ls {
		_, quorum := p.Cosign(context.Background(), l.origin+".jsonl", l.origin, l.n, l.checkpoint(), l.prover())
		require.True(t, quorum)
	}
	for _, l := range ls {
		fork := &testLog{t: t, origin: l.origin, signer: key.signer, verifier: key.verifier}
		fork.add(2, "y")
		_, quorum := p.Cosign(context.Background(), fork.origin+".jsonl", fork.origin, fork.n, fork.checkpoint(), fork.prover())
		require.False(t, quorum)
	}
	errs := logs.FilterLevelExact(zapcore.ErrorLevel).All()
	require.Len(t, errs, len(ls), "one line per log")
	for k, e := range errs {
		require.Equal(t, ls[k].origin, e.ContextMap()["origin"])
		require.Contains(t, e.ContextMap()["error"], "history rewritten or forked")
	}
}

// sessionLogs is n logs of two leaves, one per session of a templated
// path (origins example.com/session-K), all signed by key.
func sessionLogs(t *testing.T, n int) (key *testLog, ls []*testLog) {
	key = newTestLog(t, "example.com/key")
	for k := range n {
		l := &testLog{t: t, origin: fmt.Sprintf("example.com/session-%d", k), signer: key.signer, verifier: key.verifier}
		l.add(2, "x")
		ls = append(ls, l)
	}
	return key, ls
}
