package cli

import (
	"context"
	"net"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// A witness that cannot be reached fails the handover, and the output
// names neither the password nor the query token of its submission URL.
func TestLogHandoverKeepsWitnessSecretsOutOfItsOutput(t *testing.T) {
	path, oldKey, _, wkeys, _ := witnessedFixture(t)
	dir := t.TempDir()
	res := run(t, "", "keygen", "--name", "cli-test-2027", "--out", dir)
	require.Equal(t, 0, res.code, res.stderr)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close()) // closed: nothing answers there
	url := "http://user:SECRETPW@127.0.0.1:" + strconv.Itoa(port) + "/w?token=SECRETQ"
	res = run(t, "", "log", "handover", "--signing-key", oldKey, "--next-key", filepath.Join(dir, "cli-test-2027.pub"),
		"--witness", url+"="+wkeys[0], path)
	require.NotEqual(t, 0, res.code, res.stdout+res.stderr)
	out := res.stdout + res.stderr
	require.Contains(t, out, "unreachable", out)
	require.NotContains(t, out, "SECRETPW")
	require.NotContains(t, out, "SECRETQ")
}

// The witness client the handover builds redacts its transport errors as
// the collector's does: neither the URL's password nor its query token is
// in the error a failed submission returns.
func TestHandoverWitnessRedactsItsTransportErrors(t *testing.T) {
	_, _, _, wkeys, _ := witnessedFixture(t)
	vkey, _, err := loadWitnessKey(wkeys[0])
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	w, err := handoverWitness("http://user:SECRETPW@127.0.0.1:"+strconv.Itoa(port)+"/w?token=SECRETQ", vkey)
	require.NoError(t, err)
	_, err = w.AddCheckpoint(context.Background(), 0, nil, []byte("checkpoint\n"))
	require.Error(t, err)
	require.Contains(t, err.Error(), "connection refused")
	require.NotContains(t, err.Error(), "SECRETPW")
	require.NotContains(t, err.Error(), "SECRETQ")
}

// A --witness value given without its "=W.vkey": the part after the last
// "=" of the URL's query, the token, is taken for the key file. Its error
// shows neither the token nor the password; nor does verify's, given the
// handover's value by mistake.
func TestWitnessValueWithoutItsKeyFileIsNotShown(t *testing.T) {
	path, oldKey, oldPub, _, _ := witnessedFixture(t)
	dir := t.TempDir()
	res := run(t, "", "keygen", "--name", "cli-test-2027", "--out", dir)
	require.Equal(t, 0, res.code, res.stderr)
	const url = "http://user:SECRETPW@127.0.0.1:1/w?token=SECRETQ"
	res = run(t, "", "log", "handover", "--signing-key", oldKey, "--next-key", filepath.Join(dir, "cli-test-2027.pub"),
		"--witness", url, path)
	require.Equal(t, 2, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stderr, `--witness: value 1: the key file after its last "=" cannot be read (not shown: it could be the URL's query)`)
	res2 := run(t, "", "verify", "--key", oldPub, "--witness", url+"=w.vkey", path)
	require.Equal(t, 2, res2.code, res2.stdout+res2.stderr)
	require.Contains(t, res2.stderr, "--witness: value 1 is a URL: give the witness's key file (W.vkey) (not shown: it could hold a credential)")
	for _, out := range []string{res.stdout + res.stderr, res2.stdout + res2.stderr} {
		require.NotContains(t, out, "SECRETPW")
		require.NotContains(t, out, "SECRETQ")
	}
}
