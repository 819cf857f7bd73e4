package integrity

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// loopInterval is the seal interval of the tests that run the loop: the
// held witness request outlasts many of them.
const loopInterval = 20 * time.Millisecond

// startedSealer returns a sealer whose one witness is h, its loop running
// every loopInterval; the test closes it (closeBounded).
func startedSealer(t *testing.T, k *Keys, base string, h *heldWitness) *Sealer {
	t.Helper()
	s := witnessedSealer(t, k, base, h, nil)
	s.set.Interval = loopInterval
	return s
}

// closeBounded closes s, failing the test when Close does not return.
func closeBounded(t *testing.T, s *Sealer) {
	t.Helper()
	closed := make(chan error, 1)
	go func() { closed <- s.Close(bg) }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(15 * time.Second):
		t.Fatal("Close did not return")
	}
}

// records is the number of records in a note sidecar, 0 when it cannot
// be read (for conditions polled off the test's goroutine).
func records(sidecar string) int {
	f, err := os.Open(sidecar)
	if err != nil {
		return 0
	}
	defer func() { _ = f.Close() }()
	nr := NewNoteReader(f)
	n := 0
	for {
		if _, err := nr.Next(); err != nil {
			return n
		}
		n++
	}
}

// signedSize is the size of path's newest checkpoint, -1 when none reads.
func signedSize(path string, k *Keys) int64 {
	_, c, err := NewestSigned(path, k.Verifier)
	if err != nil {
		return -1
	}
	return c.N
}

// Seals keep their interval while a witness request hangs: the loop hands
// each round's files to the witness goroutine and goes on sealing. Once
// the witness answers, the newest checkpoint is submitted and cosigned.
func TestSealsKeepTheirIntervalWhileAWitnessHangs(t *testing.T) {
	k, _ := testKeys(t, "test")
	h := startHeldWitness(t, k.Verifier)
	dir := t.TempDir()
	s := startedSealer(t, k, dir, h)
	path := sealedEmpty(t, s, dir, "events.jsonl", 3)
	origin := originOf(k.Signer.Name(), path, dir)
	s.Start()
	defer closeBounded(t, s)
	h.waitArrived(t) // the first round's checkpoint, of 3 lines

	atArrival := records(CheckpointsPath(path))
	written := 3
	deadline := time.Now().Add(15 * time.Second)
	for records(CheckpointsPath(path)) < atArrival+3 {
		require.True(t, time.Now().Before(deadline), "no 3 checkpoints signed after the witness request arrived")
		written++
		appendLocked(t, path, lines(written, written))
		s.Wrote(path, 1)
		time.Sleep(loopInterval)
	}
	require.True(t, h.holding.Load(), "at least 3 new checkpoints were signed while the first witness request was held")
	require.Equal(t, []int64{3}, h.submitted(origin), "the witness saw only the held request")

	require.Eventually(t, func() bool { return signedSize(path, k) == int64(written) }, 15*time.Second, 5*time.Millisecond)
	h.release()
	require.Eventually(t, func() bool { return h.fake.Size(origin) == int64(written) }, 15*time.Second, 5*time.Millisecond,
		"the newest checkpoint was cosigned once the witness answered")
	require.Eventually(t, func() bool { return records(WitnessedPath(path)) == 2 }, 15*time.Second, 5*time.Millisecond)
}

// While the first request of a round is held, the loop seals two files
// three times more. Once it is let go, each file's checkpoints reach the
// witness in order, and the rounds sealed meanwhile give one request per
// file, with its newest checkpoint; the held file's round-mate, not asked
// yet when the request was let go, is asked once, with its newest.
func TestHeldRoundsSubmitEachFilesNewestCheckpointInOrder(t *testing.T) {
	k, _ := testKeys(t, "test")
	h := startHeldWitness(t, k.Verifier)
	dir := t.TempDir()
	s := startedSealer(t, k, dir, h)
	paths := []string{sealedEmpty(t, s, dir, "a.jsonl", 3), sealedEmpty(t, s, dir, "b.jsonl", 3)}
	s.Start()
	defer closeBounded(t, s)
	h.waitArrived(t)
	held, other := paths[0], paths[1]
	if len(h.submitted(originOf(k.Signer.Name(), held, dir))) == 0 {
		held, other = other, held
	}

	for n := 6; n <= 12; n += 3 {
		for _, p := range paths {
			appendLocked(t, p, lines(n-2, n))
			s.Wrote(p, 3)
		}
		for _, p := range paths {
			require.Eventually(t, func() bool { return signedSize(p, k) == int64(n) }, 15*time.Second, 5*time.Millisecond,
				"%s sealed at %d lines", p, n)
		}
	}
	require.True(t, h.holding.Load(), "the files were sealed while the first request was held")
	h.release()
	for _, p := range paths {
		origin := originOf(k.Signer.Name(), p, dir)
		require.Eventually(t, func() bool { return h.fake.Size(origin) == 12 }, 15*time.Second, 5*time.Millisecond,
			"%s's newest checkpoint cosigned", p)
	}
	require.Equal(t, []int64{3, 12}, h.submitted(originOf(k.Signer.Name(), held, dir)))
	require.Equal(t, []int64{12}, h.submitted(originOf(k.Signer.Name(), other, dir)))
	// The witness holds its cosignature before the sealer has recorded it.
	require.Eventually(t, func() bool { return records(WitnessedPath(held)) == 2 }, 15*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { return records(WitnessedPath(other)) == 1 }, 15*time.Second, 5*time.Millisecond)
}

// Close while a witness request hangs ends it at once, stops the witness
// goroutine, and submits the newest checkpoint once more: it is cosigned,
// and no goroutine of the sealer is left.
func TestCloseEndsAHungWitnessRoundAndLeavesNoGoroutine(t *testing.T) {
	k, _ := testKeys(t, "test")
	h := startHeldWitness(t, k.Verifier)
	before := goleak.IgnoreCurrent() // the witness servers' own goroutines
	dir := t.TempDir()
	s := startedSealer(t, k, dir, h)
	path := sealedEmpty(t, s, dir, "events.jsonl", 3)
	s.Start()
	h.waitArrived(t)
	appendLocked(t, path, lines(4, 6))
	s.Wrote(path, 3)
	require.Eventually(t, func() bool { return signedSize(path, k) == 6 }, 15*time.Second, 5*time.Millisecond)
	appendLocked(t, path, lines(7, 9))
	s.Wrote(path, 3) // sealed by Close

	closeBounded(t, s)
	require.False(t, h.holding.Load(), "Close ended the held request")
	require.Equal(t, int64(9), signedSize(path, k))
	require.Equal(t, int64(9), h.fake.Size(originOf(k.Signer.Name(), path, dir)), "the shutdown checkpoint was cosigned")
	goleak.VerifyNone(t, before,
		// Idle keep-alive connections of the HTTP client and servers.
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("net/http.(*conn).serve"))
}
