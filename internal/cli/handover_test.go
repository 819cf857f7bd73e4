package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// handedOver hands the witnessed fixture's log over to a new key, with
// both witnesses cosigning the final checkpoint, then writes and seals
// two lines of the new log at the same path.
func handedOver(t *testing.T) (path, retired, oldPub, newKey string, wkeys []string) {
	t.Helper()
	path, oldKey, oldPub, wkeys, fakes := witnessedFixture(t)
	dir := t.TempDir()
	res := run(t, "", "keygen", "--name", "cli-test-2027", "--out", dir)
	require.Equal(t, 0, res.code, res.stderr)
	newKey, newPub := filepath.Join(dir, "cli-test-2027.key"), filepath.Join(dir, "cli-test-2027.pub")
	res = run(t, "", "log", "handover", "--signing-key", oldKey, "--next-key", newPub,
		"--witness", fakes[0].URL+"="+wkeys[0], "--witness", fakes[1].URL+"="+wkeys[1], path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, `ends at 8 lines; its final checkpoint names the key cli-test-2027+`)
	matches, err := filepath.Glob(path + ".retired-*")
	require.NoError(t, err)
	for _, m := range matches {
		if !strings.Contains(filepath.Base(m), ".jsonl.retired-") || strings.Count(filepath.Base(m), ".") != 2 {
			continue
		}
		retired = m
	}
	require.NotEmpty(t, retired, "%v", matches)
	_, err = os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "the retired file was moved aside")

	s, f := op(sessionB, "stop", "b000000000000009", 3, 4)
	appendFlocked(t, path, canonLines(s, f))
	keys, err := integrity.LoadSigningKey(newKey)
	require.NoError(t, err)
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: 1e9})
	require.NoError(t, err)
	require.NoError(t, sealer.Seal(context.Background(), path))
	return path, retired, oldPub, newKey, wkeys
}

// verify, given only the first key, follows the handover to the new log.
func TestVerifyFollowsAHandover(t *testing.T) {
	path, retired, oldPub, _, wkeys := handedOver(t)
	res := run(t, "", "verify", "--key", oldPub, "--allow-open", retired, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, `handover: final at 8 lines; the log goes on as "cli-test-2027/audit.jsonl", signed by cli-test-2027+`)
	require.Contains(t, res.stdout, path+": integrity: lines=2 sealed=2 unsealed=0")

	// The witnesses cosigned the final checkpoint too.
	res = run(t, "", "verify", "--key", oldPub, "--witness", wkeys[0], "--witness", wkeys[1], "--allow-open", retired)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "witness: lines=8 witnessed=8 unwitnessed=0 records=3 quorum=2/2")
}

func TestVerifyRefusesARetiredLogThatGrew(t *testing.T) {
	t.Run("line appended to the retired file", func(t *testing.T) {
		path, retired, oldPub, _, _ := handedOver(t)
		s, f := op(sessionA, "stop", "a000000000000009", 7, 8)
		appendFlocked(t, retired, canonLines(s, f))
		res := run(t, "", "verify", "--key", oldPub, "--allow-open", "--allow-unsealed", "10", retired, path)
		require.Equal(t, 1, res.code, res.stdout)
		require.Contains(t, res.stdout, retired+":9: handover: the log was retired at 8 lines by its final checkpoint, but the file has 10")
	})
	t.Run("retired key seals on", func(t *testing.T) {
		path, retired, oldPub, _, _ := handedOver(t)
		s, f := op(sessionA, "stop", "a000000000000009", 7, 8)
		appendFlocked(t, retired, canonLines(s, f))
		oldKey := strings.TrimSuffix(oldPub, ".pub") + ".key"
		keys, err := integrity.LoadSigningKey(oldKey)
		require.NoError(t, err)
		// The collector refuses a retired log; the key holder signs on by hand.
		_, c, err := integrity.NewestSigned(retired, keys.Verifier)
		require.NoError(t, err)
		c.N++
		next, err := integrity.SignCheckpoint(c, keys.Signer)
		require.NoError(t, err)
		require.NoError(t, integrity.AppendHandover(retired, next))
		res := run(t, "", "verify", "--key", oldPub, "--allow-open", retired, path)
		require.Equal(t, 1, res.code, res.stdout)
		require.Contains(t, res.stdout, "1 checkpoints were signed after the final one: the retired log went on")
	})
	t.Run("retired key starts the path again", func(t *testing.T) {
		path, retired, oldPub, _, _ := handedOver(t)
		other := filepath.Join(filepath.Dir(path), "again", "audit.jsonl")
		require.NoError(t, os.MkdirAll(filepath.Dir(other), 0o700))
		s, f := op(sessionA, "stop", "a000000000000009", 7, 8)
		appendFlocked(t, other, canonLines(s, f))
		keys, err := integrity.LoadSigningKey(strings.TrimSuffix(oldPub, ".pub") + ".key")
		require.NoError(t, err)
		sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: 1e9})
		require.NoError(t, err)
		require.NoError(t, sealer.Seal(context.Background(), other))
		res := run(t, "", "verify", "--key", oldPub, "--allow-open", retired, other)
		require.Equal(t, 1, res.code, res.stdout)
		require.Contains(t, res.stdout, `goes on with the log "cli-test/audit.jsonl", which `+retired+" retired")
	})
}

func TestLogHandoverUsage(t *testing.T) {
	path, keyPath, _ := sealedFixture(t)
	res := run(t, "", "log", "handover", "--signing-key", keyPath, path)
	require.Equal(t, 2, res.code)
	res = run(t, "", "log", "handover", "--signing-key", keyPath, "--next-key", strings.TrimSuffix(keyPath, ".key")+".pub", path)
	require.Equal(t, 2, res.code)
	require.Contains(t, res.stderr, "--next-key: is the key being retired")
}

// A retired log put back where the collector writes is not sealed on.
func TestSealerRefusesARetiredLog(t *testing.T) {
	_, retired, oldPub, _, _ := handedOver(t)
	keys, err := integrity.LoadSigningKey(strings.TrimSuffix(oldPub, ".pub") + ".key")
	require.NoError(t, err)
	s, f := op(sessionA, "stop", "a000000000000009", 7, 8)
	appendFlocked(t, retired, canonLines(s, f))
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: 1e9})
	require.NoError(t, err)
	err = sealer.Seal(context.Background(), retired)
	require.ErrorIs(t, err, integrity.ErrRetired)
	require.ErrorContains(t, err, `final checkpoint at 8 lines; the log goes on as "cli-test-2027/audit.jsonl"`)
}

func TestLogHandoverRefusesARotatedTrail(t *testing.T) {
	path, keyPath, _, _ := rotatedFixture(t, 30)
	dir := t.TempDir()
	res := run(t, "", "keygen", "--name", "next", "--out", dir)
	require.Equal(t, 0, res.code, res.stderr)
	res = run(t, "", "log", "handover", "--signing-key", keyPath, "--next-key", filepath.Join(dir, "next.pub"), path)
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stderr, "handing over a rotated trail is not supported")
	_, err := os.Stat(path)
	require.NoError(t, err, "nothing was moved")
}
