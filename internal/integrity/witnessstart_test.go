package integrity

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A restart finds a checkpoint the witnesses did not cosign: the start
// check seals and returns without waiting for a witness that hangs (the
// collector's receivers start after it), and the checkpoint is submitted
// later, here by Close.
func TestStartDoesNotWaitForAWitness(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 3))
	require.NoError(t, newSealer(t, k).Seal(bg, path)) // not witnessed
	h := startHeldWitness(t, k.Verifier)
	s := witnessedSealer(t, k, "", h, nil)

	started := make(chan error, 1)
	go func() { started <- s.SealAtStart(bg, path) }()
	select {
	case err := <-started:
		require.NoError(t, err)
	case <-time.After(15 * time.Second):
		h.release()
		require.NoError(t, <-started)
		t.Fatal("the start check waited for the witness")
	}
	h.release()
	require.NoError(t, s.Close(bg))
	_, c, err := NewestSigned(path, k.Verifier)
	require.NoError(t, err)
	require.Equal(t, []int64{3}, h.submitted(c.Origin))
	require.Equal(t, 1, countRecords(t, WitnessedPath(path)))
}
