package cli

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// A cosignature dated an hour after the clock vouches for nothing:
// verify names it and counts the quorum without it.
func TestVerifyWitnessDoesNotCountAFutureCosignature(t *testing.T) {
	path, keyPath, pubPath, wkeys, fakes := witnessedFixture(t)
	keys, err := integrity.LoadSigningKey(keyPath)
	require.NoError(t, err)
	f, err := os.Open(integrity.WitnessedPath(path))
	require.NoError(t, err)
	var recs [][]byte
	nr := integrity.NewNoteReader(f)
	for {
		rec, err := nr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		recs = append(recs, rec)
	}
	require.NoError(t, f.Close())
	require.NoError(t, os.Remove(integrity.WitnessedPath(path)))
	fakes[1].SetClockSkew(time.Hour)
	for _, rec := range recs {
		text, _, _ := bytes.Cut(rec, []byte("\n\n"))
		c, err := integrity.ParseCheckpoint(append(text, '\n'))
		require.NoError(t, err)
		signed, err := integrity.SignCheckpoint(c, keys.Signer)
		require.NoError(t, err)
		var lines [][]byte
		for _, fake := range fakes {
			line, err := fake.CosignatureLine(string(c.Format()))
			require.NoError(t, err)
			lines = append(lines, line)
		}
		require.NoError(t, integrity.AppendWitnessed(path, signed, lines))
	}

	args := []string{"verify", "--key", pubPath, "--witness", wkeys[0], "--witness", wkeys[1]}
	res := run(t, "", append(args, path)...)
	require.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "witness: 2 cosignatures dated more than 10m0s after this host's clock are not counted "+
		"(the first: cosigned checkpoint #1, by w2.example/w+")
	require.Contains(t, res.stdout, "no checkpoint is cosigned by 2 of the 2 witnesses: the cosignatures dated ahead of "+
		"this host's clock, named above, are not counted")
	require.NotContains(t, res.stdout, "the witnesses never cosigned")

	res = run(t, "", append(args, "--quorum", "1", path)...)
	require.Equal(t, exitOK, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "are not counted")
	require.Contains(t, res.stdout, "witness: lines=8 witnessed=8 unwitnessed=0 records=2 quorum=1/2")
}
