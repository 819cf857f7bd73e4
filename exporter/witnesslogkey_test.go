package sandboxauditexporter

import (
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"testing"

	"filippo.io/torchwood"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/confmap"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// A witness that signs with the log's own key adds nothing: the key's
// holder would cosign what it rewrote. The log's verifier key, or a
// cosignature key over the same public key, is refused at start.
func TestWitnessConfigRefusesTheLogsOwnKey(t *testing.T) {
	cfg, ic := witnessConfig(t)
	pubText, _, err := integrity.ReadVerifierKey(strings.TrimSuffix(ic.SigningKeyFile, ".key") + ".pub")
	require.NoError(t, err)
	_, b64, _ := strings.Cut(pubText[strings.IndexByte(pubText, '+')+1:], "+")
	raw, err := base64.StdEncoding.DecodeString(b64)
	require.NoError(t, err)
	same, err := torchwood.NewCosignatureVerifierFromKey("witness.example/w1", ed25519.PublicKey(raw[1:]))
	require.NoError(t, err)
	for _, key := range []string{pubText, same.String()} {
		ic.Witnesses = []WitnessConfig{{ClientConfig: confighttp.ClientConfig{Endpoint: "http://127.0.0.1:1"}, PublicKey: key}}
		err := confmap.Validate(cfg)
		require.ErrorContains(t, err, "witnesses::0::public_key: the log's own signing key (signing_key_file)", key)
	}
}
