package integrity

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/witness"
	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

// Five ML-DSA-44 witnesses make a cosigned record larger than a checkpoint
// note may be: a restarted sealer still reads it, and does not submit the
// checkpoint the quorum cosigned again.
func TestRestartReadsALargeCosignedRecord(t *testing.T) {
	k, _ := testKeys(t, "test")
	var fakes []*witnesstest.Fake
	for i := range 5 {
		fakes = append(fakes, witnesstest.StartMLDSA(t, fmt.Sprintf("w%d.example/pq", i), k.Verifier))
	}
	newPool := func() *witness.Pool {
		pool, err := witness.NewPool(witnesstest.Witnesses(t, fakes...), 5, nil, nil)
		require.NoError(t, err)
		return pool
	}
	path := auditPath(t)
	appendLocked(t, path, lines(1, 3))
	for range 2 {
		s, err := NewSealer(Settings{Keys: k, Interval: time.Hour, Witnesses: newPool()})
		require.NoError(t, err)
		require.NoError(t, s.Seal(bg, path))
		require.NoError(t, s.Close(bg))
	}
	for _, f := range fakes {
		require.Equal(t, 1, f.Requests(), "cosigned once, not again after the restart")
	}
}
