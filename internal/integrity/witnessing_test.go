package integrity

import (
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/witness"
	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

// A checkpoint one witness of the quorum does not cosign is submitted
// again every round, to the witnesses that have not cosigned it; the
// witnessed sidecar records the cosignatures once, and again only when a
// witness that had not cosigned it does.
func TestWitnessRetriesRecordACheckpointOnce(t *testing.T) {
	k, _ := testKeys(t, "test")
	fakes := []*witnesstest.Fake{witnesstest.Start(t, "w1.example/w", k.Verifier), witnesstest.Start(t, "w2.example/w", k.Verifier)}
	pool, err := witness.NewPool(witnesstest.Witnesses(t, fakes...), 2, nil, nil)
	require.NoError(t, err)
	clock := &movedClock{}
	pool.SetBackoff(clock.backoff())
	sealer, err := NewSealer(Settings{Keys: k, Interval: 1e9, CallerOwns: true, Witnesses: pool})
	require.NoError(t, err)
	defer func() { require.NoError(t, sealer.Close(bg)) }()
	fakes[1].SetStatus(http.StatusServiceUnavailable)

	path := auditPath(t)
	appendLocked(t, path, lines(0, 3))
	require.NoError(t, sealer.Seal(bg, path))
	require.Equal(t, 1, countRecords(t, WitnessedPath(path)))
	for range 5 {
		require.NoError(t, sealer.SealPending(bg))
	}
	require.Equal(t, 1, fakes[0].Requests(), "the witness that cosigned the checkpoint is not asked about it again")
	require.Equal(t, 1, countRecords(t, WitnessedPath(path)), "the same cosignature is recorded once")

	// The second witness back, and asked once its pause is over: the
	// record it completes holds both.
	fakes[1].SetStatus(0)
	clock.add(time.Hour)
	require.NoError(t, sealer.SealPending(bg))
	require.Equal(t, 2, countRecords(t, WitnessedPath(path)))
	asked := fakes[0].Requests()
	require.NoError(t, sealer.SealPending(bg))
	require.Equal(t, asked, fakes[0].Requests(), "the quorum cosigned it: not submitted again")
	require.Equal(t, 2, countRecords(t, WitnessedPath(path)))
}

// countRecords is the number of records in a note sidecar, which must
// exist.
func countRecords(t *testing.T, sidecar string) int {
	t.Helper()
	_, err := os.Stat(sidecar)
	require.NoError(t, err)
	return records(sidecar)
}
