package integrity

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sandboxaudit/sandboxaudit/internal/witness"
	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

// A witness that refuses every file of a templated path (it does not know
// their origins): the files waiting for cosignatures, which every round
// seals and submits again, stay within the idle files' bound, so the
// rounds do not grow with the sessions ever written. The files let go are
// warned about once.
func TestWitnessRetriesKeepTheIdleBound(t *testing.T) {
	k, _ := testKeys(t, "test")
	fake, pool := fakeWitnessPool(t, k)
	fake.SetStatus(http.StatusNotFound)
	dir := t.TempDir()
	core, logs := observer.New(zapcore.WarnLevel)
	s, err := NewSealer(Settings{Keys: k, Interval: time.Hour, OriginBase: dir, CallerOwns: true, Witnesses: pool,
		Logger: zap.New(core)})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close(bg)) }()
	const files = maxIdleLogs + 50
	for i := range files {
		p := sessionFile(dir, i)
		appendLocked(t, p, lines(1, 1))
		s.Wrote(p, 1)
	}
	require.NoError(t, s.SealPending(bg))
	s.wit.mu.Lock()
	retry, recorded := len(s.wit.retry), len(s.wit.recorded)
	s.wit.mu.Unlock()
	require.LessOrEqual(t, retry, maxIdleLogs)
	require.LessOrEqual(t, recorded, maxIdleLogs)
	require.Len(t, logs.FilterMessageSnippet("no longer submitted again").All(), 1)
}

// lagCalls counts the seal-lag reports, one per file a round seals.
type lagCalls struct{ n atomic.Int64 }

func (c *lagCalls) LinesSealed(context.Context, int64) {}
func (c *lagCalls) CheckpointWritten(context.Context)  {}
func (c *lagCalls) SealLag(context.Context, int64)     { c.n.Add(1) }

// failureCount counts the witness failures a pool reports.
type failureCount struct{ n atomic.Int64 }

func (c *failureCount) Cosigned(context.Context, string)       {}
func (c *failureCount) Failed(context.Context, string, string) { c.n.Add(1) }

// movedClock is a clock a test moves.
type movedClock struct{ at atomic.Int64 }

func (c *movedClock) now() time.Time      { return time.Unix(1_800_000_000+c.at.Load(), 0) }
func (c *movedClock) add(d time.Duration) { c.at.Add(int64(d / time.Second)) }
func (c *movedClock) backoff() witness.Backoff {
	return witness.Backoff{First: time.Minute, Limit: 4 * time.Minute, Now: c.now}
}

// A file waiting for cosignatures that nothing writes to is submitted
// again without being sealed again: the rounds do not hold the seal lock
// over every idle file a refusing witness leaves waiting. The witness that
// refuses pauses: the rounds within its pause do not ask it, yet count
// the checkpoint as not cosigned, and the first round after asks again.
func TestWitnessRetriesAreNotSealedAgain(t *testing.T) {
	k, _ := testKeys(t, "test")
	fake := witnesstest.Start(t, "w1.example/w", k.Verifier)
	fake.SetStatus(http.StatusNotFound)
	failures, clock := &failureCount{}, &movedClock{}
	pool, err := witness.NewPool(witnesstest.Witnesses(t, fake), 1, nil, failures)
	require.NoError(t, err)
	pool.SetBackoff(clock.backoff())
	calls := &lagCalls{}
	s, err := NewSealer(Settings{Keys: k, Interval: time.Hour, CallerOwns: true, Witnesses: pool, Observer: calls})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close(bg)) }()
	path := auditPath(t)
	appendLocked(t, path, lines(1, 3))
	s.Wrote(path, 3)
	require.NoError(t, s.SealPending(bg))
	asked, sealed := fake.Requests(), calls.n.Load()
	require.Equal(t, 1, asked)
	for range 3 {
		require.NoError(t, s.SealPending(bg))
	}
	require.Equal(t, asked, fake.Requests(), "paused: not asked again every round")
	require.Equal(t, int64(4), failures.n.Load(), "each round counts the checkpoint not cosigned")
	clock.add(time.Minute)
	require.NoError(t, s.SealPending(bg))
	require.Equal(t, asked+1, fake.Requests(), "asked again once the pause is over")
	require.Equal(t, sealed, calls.n.Load(), "not sealed again")
}
