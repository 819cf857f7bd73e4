package trail

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// shuffledTraces writes sessions of operations whose starts and finishes
// name one of a few traces or none, some without their start, some with
// a second start or finish, the lines in a random order.
func shuffledTraces(t *testing.T, rng *rand.Rand) string {
	t.Helper()
	traces := []string{"", "aaaa", "bbbb", "cccc"}
	at := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	var evs []auditevent.Event
	for s := range 4 {
		session := uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "session-%d", s))
		for k := range int64(6) {
			start, finish := genOp(session, k, at)
			start.TraceID, finish.TraceID = nil, nil
			if tr := traces[rng.IntN(len(traces))]; tr != "" {
				start.TraceID = &tr
			}
			if tr := traces[rng.IntN(len(traces))]; tr != "" {
				finish.TraceID = &tr
			}
			if rng.IntN(5) > 0 {
				evs = append(evs, start)
			}
			if rng.IntN(6) == 0 { // a second start, at a seq of its own
				start.EventID, start.Seq = uuid.New(), 2000+k
				evs = append(evs, start)
			}
			evs = append(evs, finish)
			if rng.IntN(6) == 0 { // a second finish, at a seq of its own
				finish.EventID, finish.Seq = uuid.New(), 1000+k
				evs = append(evs, finish)
			}
		}
	}
	rng.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
	var b []byte
	for i := range evs {
		b = auditevent.AppendLine(b, &evs[i])
	}
	p := filepath.Join(t.TempDir(), "events.jsonl")
	require.NoError(t, os.WriteFile(p, b, 0o600))
	return p
}

// The one pass that sums sessions as the lines are read gives each
// session the sums the second pass, over ReadOps' operations, gives it,
// its trace among them: its first operation's that names one, whatever
// the order of the lines.
func TestSessionTraceDoesNotDependOnLineOrder(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(40) {
		p := shuffledTraces(t, rand.New(rand.NewPCG(seed, 1)))
		opts := Options{TempDir: t.TempDir()}
		first, st, again, err := sumSessions(ctx, []string{p}, opts, nil)
		require.NoError(t, err)
		require.False(t, again, "seed %d", seed)
		second, _, err := sessionsFromOps(ctx, []string{p}, opts, st)
		require.NoError(t, err)
		assert.Equal(t, second, first, "seed %d", seed)
	}
}
