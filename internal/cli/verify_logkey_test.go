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
)

// verify --witness given the log's own key, as its verifier key file or
// as a cosignature key over the same public key, refuses it: the key's
// holder can cosign what it rewrote.
func TestVerifyWitnessRefusesTheLogsOwnKey(t *testing.T) {
	path, _, pubPath, wkeys, _ := witnessedFixture(t)
	b, err := os.ReadFile(pubPath)
	require.NoError(t, err)
	text := strings.TrimSpace(string(b))
	_, b64, _ := strings.Cut(text[strings.IndexByte(text, '+')+1:], "+")
	raw, err := base64.StdEncoding.DecodeString(b64)
	require.NoError(t, err)
	same, err := torchwood.NewCosignatureVerifierFromKey("witness.example/w1", ed25519.PublicKey(raw[1:]))
	require.NoError(t, err)
	samePath := filepath.Join(t.TempDir(), "same.vkey")
	require.NoError(t, os.WriteFile(samePath, []byte(same.String()+"\n"), 0o644))
	for _, k := range []string{pubPath, samePath} {
		res := run(t, "", "verify", "--key", pubPath, "--witness", wkeys[0], "--witness", k, "--quorum", "1", path)
		require.Equal(t, exitUsage, res.code, res.stdout+res.stderr)
		require.Contains(t, res.stderr, "verify: --witness: "+k+" holds the log's own key (--key)")
	}
}

// verify --witness given the key a handover passed the log to, as a
// cosignature key, reports it when it reads the handover: that key's
// holder signs the new log, and could cosign what it rewrote there.
func TestVerifyWitnessRefusesTheKeyALogWasHandedOverTo(t *testing.T) {
	path, retired, oldPub, newKey, wkeys := handedOver(t)
	b, err := os.ReadFile(strings.TrimSuffix(newKey, ".key") + ".pub")
	require.NoError(t, err)
	text := strings.TrimSpace(string(b))
	_, b64, _ := strings.Cut(text[strings.IndexByte(text, '+')+1:], "+")
	raw, err := base64.StdEncoding.DecodeString(b64)
	require.NoError(t, err)
	same, err := torchwood.NewCosignatureVerifierFromKey("witness.example/w3", ed25519.PublicKey(raw[1:]))
	require.NoError(t, err)
	samePath := filepath.Join(t.TempDir(), "same.vkey")
	require.NoError(t, os.WriteFile(samePath, []byte(same.String()+"\n"), 0o644))
	res := run(t, "", "verify", "--key", oldPub, "--witness", wkeys[0], "--witness", samePath, "--quorum", "1",
		"--allow-unwitnessed", "2", retired, path)
	require.Equal(t, 1, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, retired+": handover: --witness "+samePath+" holds the key the log is handed over to (cli-test-2027+")
}
