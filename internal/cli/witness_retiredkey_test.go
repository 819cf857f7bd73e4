package cli

import (
	"crypto/ed25519"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/torchwood"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// cosignatureKeyFile writes a witness cosignature key, named name, over
// the public key of the log verifier key file pub, and returns its path:
// a witness run with that log key.
func cosignatureKeyFile(t *testing.T, pub, name string) string {
	t.Helper()
	b, err := os.ReadFile(pub)
	require.NoError(t, err)
	text := strings.TrimSpace(string(b))
	_, b64, _ := strings.Cut(text[strings.IndexByte(text, '+')+1:], "+")
	raw, err := base64.StdEncoding.DecodeString(b64)
	require.NoError(t, err)
	v, err := torchwood.NewCosignatureVerifierFromKey(name, ed25519.PublicKey(raw[1:]))
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "retired.vkey")
	require.NoError(t, os.WriteFile(p, []byte(v.String()+"\n"), 0o644))
	return p
}

// log handover of a log that was handed over before refuses as a witness
// the key it was handed over from, as it refuses the retiring and next
// keys: that key's holder could cosign what it rewrote.
func TestLogHandoverRefusesAKeyTheLogWasHandedOverFromAsAWitness(t *testing.T) {
	path, _, oldPub, newKey, wkeys := handedOver(t)
	_, thirdPub := keyFiles(t, "cli-test-2028")
	retiredKey := cosignatureKeyFile(t, oldPub, "witness.example/w3")
	res := run(t, "", "log", "handover", "--signing-key", newKey, "--next-key", thirdPub,
		"--witness", "http://127.0.0.1:1="+wkeys[0], "--witness", "http://127.0.0.1:1="+retiredKey, path)
	require.Equal(t, exitUsage, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stderr, "log handover: --witness: "+retiredKey+" holds a key the log was handed over from (it signed "+
		integrity.HandoverPath(path)+"): a witness cosigns with a key of its own")
}

// verify given the new log with its own key (the retired log not read)
// reports a --witness key that signed the handover note beside it.
func TestVerifyWitnessRefusesAKeyTheLogWasHandedOverFrom(t *testing.T) {
	path, _, oldPub, newKey, wkeys := handedOver(t)
	newPub := strings.TrimSuffix(newKey, ".key") + ".pub"
	retiredKey := cosignatureKeyFile(t, oldPub, "witness.example/w3")
	res := run(t, "", "verify", "--key", newPub, "--witness", wkeys[0], "--witness", retiredKey, "--quorum", "1",
		"--allow-unwitnessed", "2", path)
	require.Equal(t, 1, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, path+": handover: --witness "+retiredKey+" holds a key the log was handed over from (it signed "+
		integrity.HandoverPath(path)+")")
}

// verify --alone given a segment of the new log with its own key reports
// a --witness key that signed the handover note beside its log, as verify
// of the whole log does.
func TestVerifyAloneWitnessRefusesAKeyTheLogWasHandedOverFrom(t *testing.T) {
	path, _, oldPub, newKey := handOverRotated(t)
	segs := rotateNewLog(t, path, newKey, 30)
	newPub := strings.TrimSuffix(newKey, ".key") + ".pub"
	retiredKey := cosignatureKeyFile(t, oldPub, "witness.example/w3")
	res := run(t, "", "verify", "--key", newPub, "--witness", retiredKey, "--quorum", "1", "--alone", segs[1].Path)
	require.Equal(t, 1, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, path+": handover: --witness "+retiredKey+" holds a key the log was handed over from (it signed "+
		integrity.HandoverPath(path)+")")
}
