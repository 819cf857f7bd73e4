package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/witness"
	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

// A handover killed after it moved the audit file aside, before its
// checkpoints sidecar: a writer that appends to the path then makes a new
// file there. The run again finishes the handover into the retired name it
// had begun, and the new file stays at the path, its lines the new log's.
func TestLogHandoverResumesPastANewFileAtThePath(t *testing.T) {
	t.Run("plain, the Python sink writes", func(t *testing.T) {
		path, keyPath, oldPub := sealedFixture(t)
		begun := path + ".retired-20270101T000000Z"
		newKey := killedHandover(t, path, keyPath, begun, []string{integrity.StorePath(path), path})
		s, f := op(sessionB, "stop", "b000000000000009", 3, 4)
		appendFlocked(t, path, canonLines(s, f))
		// The collector, started with the new key, writes but never seals
		// there: the path's checkpoints still end with the final one. Its
		// refused start leaves an empty hash store, which stays at the
		// path for the new log.
		require.ErrorContains(t, sealWith(t, path, newKey), "a handover that stopped midway is finished by running `sandboxaudit log handover` again")
		require.Zero(t, fileSize(t, integrity.StorePath(path)))
		resumeHandover(t, path, keyPath, newKey, oldPub, begun, begun, canonLines(s, f), "lines=8 sealed=8")
	})
	t.Run("rotated, the collector's file sink writes", func(t *testing.T) {
		path, keyPath, oldPub, _ := rotatedFixture(t, 60)
		segs, err := filesink.Segments(path)
		require.NoError(t, err)
		begun := path + ".retired-20270101T000000Z"
		require.NoError(t, os.Mkdir(begun, 0o700))
		moved := []string{integrity.StorePath(path), path}
		for _, s := range segs {
			moved = append(moved, s.Path)
		}
		newKey := killedHandover(t, path, keyPath, begun, moved)
		sink, err := filesink.New(filesink.Options{Path: path})
		require.NoError(t, err)
		s, f := op(sessionB, "stop", "b000000000000999", 201, 202)
		require.NoError(t, sink.WriteBatch(context.Background(), sessionB.String(), []byte(canonLines(s, f))))
		require.NoError(t, sink.Close())
		resumeHandover(t, path, keyPath, newKey, oldPub, begun, filepath.Join(begun, filepath.Base(path)), canonLines(s, f), "lines=240 sealed=240")
	})
}

// killedHandover leaves path as a handover to cli-test-2027 killed midway
// leaves it: the final checkpoint signed, the files moved into begun (a
// directory, or the retired file's name). It returns the new key.
func killedHandover(t *testing.T, path, keyPath, begun string, moved []string) string {
	t.Helper()
	_, _, newKey, _ := appendFinal(t, path, keyPath)
	for _, f := range moved {
		to := begun + f[len(path):]
		if fi, err := os.Stat(begun); err == nil && fi.IsDir() {
			to = filepath.Join(begun, filepath.Base(f))
		}
		require.NoError(t, os.Rename(f, to))
	}
	return newKey
}

// appendFinal signs, with the key at keyPath, the final checkpoint of
// path's log handing it over to a new cli-test-2027 key, and appends it
// to path's checkpoints, as a handover's first step does. It returns the
// signed note, the checkpoint it ends, and the new key's files.
func appendFinal(t *testing.T, path, keyPath string) (signed []byte, last integrity.Checkpoint, newKey, newPub string) {
	t.Helper()
	keys, err := integrity.LoadSigningKey(keyPath)
	require.NoError(t, err)
	newKey, newPub = keyFiles(t, "cli-test-2027")
	next, err := os.ReadFile(newPub)
	require.NoError(t, err)
	_, last, err = integrity.NewestSigned(path, keys.Verifier)
	require.NoError(t, err)
	signed, err = integrity.SignHandover(integrity.Handover{Checkpoint: last, NextKey: strings.TrimSpace(string(next)),
		NextOrigin: "cli-test-2027/" + filepath.Base(path)}, keys.Signer)
	require.NoError(t, err)
	require.NoError(t, integrity.AppendHandover(path, signed))
	return signed, last, newKey, newPub
}

// resumeHandover runs the handover of path again and checks that it
// finished into begun (retired the file there), left the writer's lines
// (want) at the path, and that the new log, sealed by the collector's
// start, starts from it.
func resumeHandover(t *testing.T, path, keyPath, newKey, oldPub, begun, retired, want, counts string) {
	t.Helper()
	newPub := strings.TrimSuffix(newKey, ".key") + ".pub"
	res := run(t, "", "log", "handover", "--signing-key", keyPath, "--next-key", newPub, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "retired file: "+retired+" ")
	require.Contains(t, res.stdout, "log handover: "+path+" was made again after the handover moved the log's file: it stays, and its lines start the new log")
	require.Equal(t, want, string(readFile(t, path)), "the new file stays at the path")
	require.NoError(t, sealAtStart(t, path, newKey), "the collector started with the new key seals the new file's lines")
	res = run(t, "", "verify", "--key", oldPub, "--allow-open", begun, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, counts)
	require.Contains(t, res.stdout, path+": handover: the log starts from the handover of "+retired)
}

// A witnessed handover killed after it moved the log's witnessed sidecar,
// with the final checkpoint's cosignatures, aside: the run again has the
// witnesses cosign the final checkpoint again, and those go into the
// retired log too, not into a witnessed sidecar left at the path for the
// new log (whose key did not sign them).
func TestLogHandoverResumedWithItsWitnesses(t *testing.T) {
	path, keyPath, oldPub, wkeys, fakes := witnessedFixture(t)
	signed, last, _, newPub := appendFinal(t, path, keyPath)
	pool, err := witness.NewPool(witnesstest.Witnesses(t, fakes...), 2, nil, nil)
	require.NoError(t, err)
	prove := func(old int64) (tlog.TreeProof, error) { return integrity.ProveFromStore(path, last.N, old) }
	cosigs, quorum := pool.Cosign(context.Background(), path, last.Origin, last.N, signed, prove)
	require.True(t, quorum)
	require.NoError(t, integrity.AppendWitnessed(path, signed, cosigs))
	begun := path + ".retired-20270101T000000Z"
	for _, f := range []string{integrity.StorePath(path), path, integrity.WitnessedPath(path)} {
		require.NoError(t, os.Rename(f, begun+f[len(path):]))
	}

	res := run(t, "", "log", "handover", "--signing-key", keyPath, "--next-key", newPub,
		"--witness", fakes[0].URL+"="+wkeys[0], "--witness", fakes[1].URL+"="+wkeys[1], path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "retired file: "+begun+" ")
	_, err = os.Lstat(integrity.WitnessedPath(path))
	require.ErrorIs(t, err, os.ErrNotExist, "no witnessed sidecar of the retired log stays at the path")
	res = run(t, "", "verify", "--key", oldPub, "--witness", wkeys[0], "--witness", wkeys[1], begun)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "witness: lines=8 witnessed=8 unwitnessed=0")
}

// sealAtStart seals path once as the collector does at its start.
func sealAtStart(t *testing.T, path, keyFile string) error {
	t.Helper()
	return sealFileOnce(t, path, keyFile, (*integrity.Sealer).SealAtStart)
}

// A retired file put back at the path without its sidecars while the note
// waits starts the new log as a writer's new file would, and verify names
// it: the retired log's file is missing, or its lines are there twice.
func TestVerifyNamesARetiredFilePutBackAsTheNewLog(t *testing.T) {
	for _, tc := range []struct {
		name string
		put  func(t *testing.T, retired, path string)
		want func(retired, path string) string
	}{
		{"moved", func(t *testing.T, retired, path string) { require.NoError(t, os.Rename(retired, path)) },
			func(retired, _ string) string {
				return retired + ": integrity: the audit file is missing, but its signed history is there"
			}},
		{"copied", func(t *testing.T, retired, path string) {
			require.NoError(t, os.WriteFile(path, readFile(t, retired), 0o600))
		}, func(retired, path string) string {
			return path + ":1: seq 1 used twice in session " + sessionA.String() + ": duplicate of " + retired + ":1"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, retired, oldPub, newKey, _ := handOver(t)
			tc.put(t, retired, path)
			require.NoError(t, sealAtStart(t, path, newKey), "the note waits: the lines start the new log")
			res := run(t, "", "verify", "--key", oldPub, "--allow-open", filepath.Dir(path))
			require.Equal(t, 1, res.code, res.stdout+res.stderr)
			require.Contains(t, res.stdout, path+": handover: the log starts from the handover of "+retired)
			require.Contains(t, res.stdout, tc.want(retired, path))
		})
	}
}
