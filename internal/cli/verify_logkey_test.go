package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// verify --witness given the log's own key, as its verifier key file or
// as a cosignature key over the same public key, refuses it: the key's
// holder can cosign what it rewrote.
func TestVerifyWitnessRefusesTheLogsOwnKey(t *testing.T) {
	path, _, pubPath, wkeys, _ := witnessedFixture(t)
	samePath := cosignatureKeyFile(t, pubPath, "witness.example/w1")
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
	samePath := cosignatureKeyFile(t, strings.TrimSuffix(newKey, ".key")+".pub", "witness.example/w3")
	res := run(t, "", "verify", "--key", oldPub, "--witness", wkeys[0], "--witness", samePath, "--quorum", "1",
		"--allow-unwitnessed", "2", retired, path)
	require.Equal(t, 1, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, retired+": handover: --witness "+samePath+" holds the key the log is handed over to (cli-test-2027+")
}
