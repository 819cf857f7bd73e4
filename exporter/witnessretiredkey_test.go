package sandboxauditexporter

import (
	"crypto/ed25519"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/torchwood"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/confighttp"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

// handOverTo writes beside path the handover note of a log an earlier key
// signed, naming the signing key of ic as the next, and returns a witness
// cosignature key over that earlier key.
func handOverTo(t *testing.T, path string, ic *IntegrityConfig) string {
	t.Helper()
	oldKey, oldPub, err := integrity.GenerateKeyFiles(t.TempDir(), "exporter-test-2026")
	require.NoError(t, err)
	old, err := integrity.LoadSigningKey(oldKey)
	require.NoError(t, err)
	cur, err := integrity.LoadSigningKey(ic.SigningKeyFile)
	require.NoError(t, err)
	signed, err := integrity.SignHandover(integrity.Handover{
		Checkpoint: integrity.Checkpoint{Origin: "exporter-test-2026/" + filepath.Base(path), N: 1},
		NextKey:    cur.VKey, NextOrigin: "exporter-test/" + filepath.Base(path)}, old.Signer)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, integrity.WriteHandoverNote(path, signed))
	pubText, _, err := integrity.ReadVerifierKey(oldPub)
	require.NoError(t, err)
	_, b64, _ := strings.Cut(pubText[strings.IndexByte(pubText, '+')+1:], "+")
	raw, err := base64.StdEncoding.DecodeString(b64)
	require.NoError(t, err)
	w, err := torchwood.NewCosignatureVerifierFromKey("witness.example/w2", ed25519.PublicKey(raw[1:]))
	require.NoError(t, err)
	return w.String()
}

// A witness whose key is one the log was handed over from (it signed the
// handover note the log starts from) is refused at start, as the log's
// own key is: the retired key's holder could cosign what it rewrote. For
// a templated path, so is one of any session's log.
func TestWitnessConfigRefusesAKeyTheLogWasHandedOverFrom(t *testing.T) {
	for _, templated := range []bool{false, true} {
		cfg, ic := witnessConfig(t)
		path := cfg.File.Get().Path
		if templated {
			dir := t.TempDir()
			withFile(cfg, filepath.Join(dir, "{session_id}", "events.jsonl"), auditevent.PolicyOverride{})
			path = filepath.Join(dir, "11111111-2222-4333-8444-555555555555", "events.jsonl")
		}
		retired := handOverTo(t, path, ic)
		if templated {
			require.NoError(t, os.WriteFile(path, nil, 0o600)) // the session's file, which the start walks to
		}
		withWitness(ic, witnesstest.Start(t, "witness.example/w1", nil))
		cc := confighttp.NewDefaultClientConfig()
		cc.Endpoint = "http://127.0.0.1:1"
		ic.Witnesses = append(ic.Witnesses, WitnessConfig{ClientConfig: cc, PublicKey: retired})
		err := startError(t, cfg)
		require.ErrorContains(t, err, "file: integrity: witnesses::1::public_key: a key the log was handed over from (it signed "+
			integrity.HandoverPath(path)+")", "templated: %v", templated)
	}
}
