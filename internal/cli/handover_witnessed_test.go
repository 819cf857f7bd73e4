package cli

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// A witnessed log handed over without --witness would retire with its final
// checkpoint, and the lines sealed for it, cosigned by no witness: the
// handover refuses, and says how to go on, unless --without-witnesses says
// that is meant. verify --witness then names the retired log's lines past
// the newest cosigned checkpoint.
func TestLogHandoverOfAWitnessedLogNeedsItsWitnesses(t *testing.T) {
	path, oldKey, oldPub, wkeys, _ := witnessedFixture(t)
	s, f := op(sessionA, "stop", "a000000000000009", 7, 8)
	appendFlocked(t, path, canonLines(s, f))
	_, newPub := keyFiles(t, "cli-test-2027")

	res := run(t, "", "log", "handover", "--signing-key", oldKey, "--next-key", newPub, path)
	require.Equal(t, 2, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stderr, "log handover: "+path+": the log is witnessed ("+integrity.WitnessedPath(path)+
		"): give its witnesses (--witness SUBMISSION_URL=W.vkey, one each) to have them cosign the final checkpoint, "+
		"or --without-witnesses to hand it over with that checkpoint cosigned by none")
	_, err := os.Stat(path)
	require.NoError(t, err, "nothing was moved")
	v, err := integrity.LoadVerifierKey(oldPub)
	require.NoError(t, err)
	st, err := integrity.ReadHandover(path, v)
	require.NoError(t, err)
	require.Nil(t, st.Final, "nothing was signed")

	res = run(t, "", "log", "handover", "--signing-key", oldKey, "--next-key", newPub, "--without-witnesses",
		"--witness", "http://127.0.0.1:1/w="+wkeys[0], path)
	require.Equal(t, 2, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stderr, "--without-witnesses and --witness exclude each other")

	res = run(t, "", "log", "handover", "--signing-key", oldKey, "--next-key", newPub, "--without-witnesses", path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	retired := retiredOf(t, path)
	res = run(t, "", "verify", "--key", oldPub, "--witness", wkeys[0], "--witness", wkeys[1], retired)
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stdout, retired+": witness: 2 lines after the newest checkpoint the witnesses cosigned (line 8); "+
		"the log was retired by a final checkpoint these witnesses did not cosign (log handover --without-witnesses)")
	res = run(t, "", "verify", "--key", oldPub, "--witness", wkeys[0], "--witness", wkeys[1], "--allow-unwitnessed", "2", retired)
	require.Equal(t, 0, res.code, res.stdout)
}

// A log with no witnessed sidecar is handed over without --witness.
func TestLogHandoverOfAnUnwitnessedLog(t *testing.T) {
	path, keyPath, _ := sealedFixture(t)
	_, next := keyFiles(t, "cli-next")
	res := run(t, "", "log", "handover", "--signing-key", keyPath, "--next-key", next, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
}

// A handover killed after it moved the log's files, the witnessed sidecar
// among them, and before the checkpoints sidecar, is run again with its
// witnesses: their cosignatures of the final checkpoint go to the retired
// log's witnessed sidecar, not to a new one at the path, which would start
// the new log with a record of the old one.
func TestLogHandoverRunAgainAfterItsFilesMovedKeepsTheCosignaturesWithTheRetiredLog(t *testing.T) {
	path, oldKey, oldPub, wkeys, fakes := witnessedFixture(t)
	newKey, newPub := keyFiles(t, "cli-test-2027")
	args := []string{"log", "handover", "--signing-key", oldKey, "--next-key", newPub,
		"--witness", fakes[0].URL + "=" + wkeys[0], "--witness", fakes[1].URL + "=" + wkeys[1], path}
	res := run(t, "", args...)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	retired := retiredOf(t, path)
	// As a run killed before it wrote the note and moved the checkpoints.
	require.NoError(t, os.Rename(integrity.CheckpointsPath(retired), integrity.CheckpointsPath(path)))
	require.NoError(t, os.Remove(integrity.HandoverPath(path)))

	res = run(t, "", args...)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "retired file: "+retired)
	_, err := os.Lstat(integrity.WitnessedPath(path))
	require.ErrorIs(t, err, os.ErrNotExist, "the new log has no witnessed sidecar yet")

	startNewLog(t, path, newKey)
	res = run(t, "", "verify", "--key", oldPub, retired, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, path+": handover: the log starts from the handover of "+retired)
	res = run(t, "", "verify", "--key", oldPub, "--witness", wkeys[0], "--witness", wkeys[1], retired)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, retired+": witness: lines=8 witnessed=8 unwitnessed=0")
}

// log handover refuses as a witness the key it hands the log over to, as
// it refuses the retiring one: that key's holder signs the next log.
func TestLogHandoverRefusesTheNextKeyAsAWitness(t *testing.T) {
	path, oldKey, _, wkeys, fakes := witnessedFixture(t)
	_, newPub := keyFiles(t, "cli-test-2027")
	res := run(t, "", "log", "handover", "--signing-key", oldKey, "--next-key", newPub,
		"--witness", fakes[0].URL+"="+wkeys[0], "--witness", fakes[1].URL+"="+newPub, path)
	require.Equal(t, exitUsage, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stderr, "log handover: --witness: "+newPub+" holds the key the log is handed over to (--next-key): "+
		"a witness cosigns with a key of its own")
}
