package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// savedCheckpoint copies the signed checkpoint of n lines from path's
// checkpoints to a file outside, as an auditor keeps one.
func savedCheckpoint(t *testing.T, path, pub string, n int64) string {
	t.Helper()
	name, _ := keepCheckpoint(t, path, pub, func(m int64) bool { return m == n })
	return name
}

// resealWith replaces path's lines by ls and seals them as a new history
// with the same key: what a key holder rewriting the log would do. A plain
// verify --key then passes.
func resealWith(t *testing.T, path, key, pub string, ls []string) {
	t.Helper()
	for _, suffix := range integrity.LogSidecarSuffixes() {
		require.NoError(t, os.RemoveAll(path+suffix))
	}
	writeLines(t, path, ls)
	require.NoError(t, sealWith(t, path, key))
	res := run(t, "", "verify", "--key", pub, path)
	require.Equal(t, 0, res.code, "the rewritten history verifies on its own: "+res.stdout)
}

// A checkpoint saved off the host is proven in a file that never rotated:
// the file's first N lines must still have its root.
func TestVerifyGivenCheckpointOfAFile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, path, key, pub string)
		code   int
		want   func(path, saved string) string
	}{
		{"the same history", func(*testing.T, string, string, string) {}, exitOK, func(path, saved string) string {
			return fmt.Sprintf("%s: integrity: lines 1-6 of the log are in the checkpoint given in %s (6 lines): the lines read lead to its root\n", path, saved)
		}},
		{"the history rewritten and sealed again with the key", func(t *testing.T, path, key, pub string) {
			ls := fileLines(t, path)
			ls[1] = strings.Replace(ls[1], `"duration_ms":1.5`, `"duration_ms":1.6`, 1)
			resealWith(t, path, key, pub, ls)
		}, exitProblems, func(path, saved string) string {
			return fmt.Sprintf("%s: integrity: the checkpoint given (6 lines) is not of the history %s holds: its first 6 lines (up to line 6 of %s) "+
				"do not have the checkpoint's root hash, so they were changed, or the history was rewritten and sealed again with the key\n", saved, path, path)
		}},
		{"the history cut back below it and sealed again", func(t *testing.T, path, key, pub string) {
			resealWith(t, path, key, pub, fileLines(t, path)[:4])
		}, exitProblems, func(path, saved string) string {
			return fmt.Sprintf("%s: integrity: the checkpoint given (6 lines) covers more than the 4 lines of the log %s holds: lines were cut off the end\n", saved, path)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, key, pub := sealedFixture(t)
			saved := savedCheckpoint(t, path, pub, 6)
			tc.change(t, path, key, pub)
			res := run(t, "", "verify", "--key", pub, "--checkpoint", saved, path)
			require.Equal(t, tc.code, res.code, res.stdout+res.stderr)
			require.Contains(t, res.stdout, tc.want(path, saved))
		})
	}
}

// Two checkpoints given, one per line; one of another log (same key) is a
// problem naming it.
func TestVerifyGivenCheckpointsOfAFileEachNamed(t *testing.T) {
	path, key, pub := sealedFixture(t)
	six, eight := savedCheckpoint(t, path, pub, 6), savedCheckpoint(t, path, pub, 8)
	res := run(t, "", "verify", "--key", pub, "--checkpoint", six, "--checkpoint", eight, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, fmt.Sprintf("lines 1-6 of the log are in the checkpoint given in %s (6 lines)", six))
	require.Contains(t, res.stdout, fmt.Sprintf("lines 1-8 of the log are in the checkpoint given in %s (8 lines)", eight))

	keys, err := integrity.LoadSigningKey(key)
	require.NoError(t, err)
	other, err := integrity.SignCheckpoint(integrity.Checkpoint{Origin: "cli-test/other.jsonl", N: 1}, keys.Signer)
	require.NoError(t, err)
	foreign := filepath.Join(t.TempDir(), "other.checkpoint")
	require.NoError(t, os.WriteFile(foreign, other, 0o600))
	res = run(t, "", "verify", "--key", pub, "--checkpoint", six, "--checkpoint", foreign, path)
	require.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, foreign+`: integrity: the checkpoint given is of the log "cli-test/other.jsonl", and no file verified is of that log`)
	require.Contains(t, res.stdout, "problems=1")
}

// On a rotated trail the checkpoint given is proven wherever its size
// falls: in the active file, in a segment, or before the segments kept.
func TestVerifyGivenCheckpointOfATrail(t *testing.T) {
	for _, tc := range []struct {
		name string
		pick func(kt keptTrail) func(int64) bool
		how  string
	}{
		{"in the active file", func(kt keptTrail) func(int64) bool {
			return func(n int64) bool { return n > kt.rec(len(kt.segs)-1).End() }
		}, "the lines read lead to its root"},
		{"in a segment before others", func(kt keptTrail) func(int64) bool {
			return func(n int64) bool { return n > kt.rec(0).First && n < kt.rec(2).First }
		}, "the lines read lead to its root"},
		{"in lines retention removed", func(kt keptTrail) func(int64) bool {
			return func(n int64) bool { return n < kt.rec(0).First }
		}, "a consistency proof from the hash store leads from its root to the tree of the lines read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kt := newKeptTrail(t)
			name, cp := kt.checkpointFile(t, tc.pick(kt))
			res := run(t, "", "verify", "--key", kt.pub, "--checkpoint", name, filepath.Dir(kt.path))
			require.Equal(t, 0, res.code, res.stdout+res.stderr)
			require.Contains(t, res.stdout, fmt.Sprintf("%s: integrity: lines 1-%d of the log are in the checkpoint given in %s (%d lines): %s\n",
				kt.path, cp.N, name, cp.N, tc.how))
		})
	}
}

// A trail cut back below the checkpoint given, with its sidecars made to
// match, fails on it.
func TestVerifyGivenCheckpointOfATrailCutBack(t *testing.T) {
	kt := newKeptTrail(t)
	name, cp := kt.checkpointFile(t, func(n int64) bool { return n == kt.size })
	last := kt.rec(len(kt.segs) - 1).End()
	require.Greater(t, cp.N, last, "the active file holds lines")
	// The attacker cuts the active file back to the last segment's end and
	// keeps only the checkpoints before that.
	require.NoError(t, os.WriteFile(kt.path, nil, 0o600))
	cutCheckpoints(t, kt.path, kt.pub, last)
	res := run(t, "", "verify", "--key", kt.pub, filepath.Dir(kt.path))
	require.Equal(t, 0, res.code, "the shorter history verifies on its own: "+res.stdout+res.stderr)
	res = run(t, "", "verify", "--key", kt.pub, "--checkpoint", name, filepath.Dir(kt.path))
	require.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, fmt.Sprintf("%s: integrity: the checkpoint given (%d lines) covers more than the %d lines of the log %s holds: lines were cut off the end\n",
		name, cp.N, last, kt.path))
}

// cutCheckpoints keeps only the checkpoints of path of at most n lines.
func cutCheckpoints(t *testing.T, path, pub string, n int64) {
	t.Helper()
	v, err := integrity.LoadVerifierKey(pub)
	require.NoError(t, err)
	b, err := os.ReadFile(integrity.CheckpointsPath(path))
	require.NoError(t, err)
	var kept []byte
	for nr := integrity.NewNoteReader(strings.NewReader(string(b))); ; {
		rec, err := nr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		c, err := integrity.OpenCheckpoint(rec, v)
		require.NoError(t, err)
		if c.N <= n {
			kept = integrity.AppendRecord(kept, rec)
		}
	}
	require.NoError(t, os.WriteFile(integrity.CheckpointsPath(path), kept, 0o600))
}

// The key holder rewrites a line of the active file of a rotated trail
// and seals it again: the trail verifies on its own, not against the
// checkpoint kept off the host.
func TestVerifyGivenCheckpointOfATrailRewritten(t *testing.T) {
	kt := newKeptTrail(t)
	name, cp := kt.checkpointFile(t, func(n int64) bool { return n == kt.size })
	last := kt.rec(len(kt.segs) - 1).End()
	require.Greater(t, cp.N, last, "the active file holds lines")
	ls := fileLines(t, kt.path)
	ls[1] = strings.Replace(ls[1], `"ok":true`, `"ok":false`, 1)
	writeLines(t, kt.path, ls)
	cutCheckpoints(t, kt.path, kt.pub, last)
	store, err := os.ReadFile(integrity.StorePath(kt.path))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(integrity.StorePath(kt.path), store[:tlog.StoredHashCount(last)*tlog.HashSize], 0o600))
	require.NoError(t, sealWith(t, kt.path, kt.key))
	res := run(t, "", "verify", "--key", kt.pub, filepath.Dir(kt.path))
	require.Equal(t, 0, res.code, "the rewritten history verifies on its own: "+res.stdout+res.stderr)

	res = run(t, "", "verify", "--key", kt.pub, "--checkpoint", name, filepath.Dir(kt.path))
	require.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, fmt.Sprintf("%s: integrity: the checkpoint given (%d lines) is not of the history %s holds: its first %d lines (up to line %d of %s) do not have",
		name, cp.N, kt.path, cp.N, cp.N-last, kt.path))
}

// When retention removed every segment, a checkpoint given of lines it
// removed is proven from the signed end of the last segment, where the
// active file's lines start.
func TestVerifyGivenCheckpointAfterEverySegmentRemoved(t *testing.T) {
	kt := newKeptTrail(t)
	name, cp := kt.checkpointFile(t, func(n int64) bool { return n < kt.rec(0).First })
	keys, err := integrity.LoadSigningKey(kt.key)
	require.NoError(t, err)
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: time.Second})
	require.NoError(t, err)
	for _, seg := range kt.segs {
		require.NoError(t, sealer.Retire(kt.path, seg))
		require.NoError(t, os.Remove(seg.Path))
	}
	require.NoError(t, sealer.Close(context.Background()))
	res := run(t, "", "verify", "--key", kt.pub, filepath.Dir(kt.path))
	require.Equal(t, 0, res.code, "the active file alone verifies: "+res.stdout+res.stderr)

	res = run(t, "", "verify", "--key", kt.pub, "--checkpoint", name, filepath.Dir(kt.path))
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, fmt.Sprintf("%s: integrity: lines 1-%d of the log are in the checkpoint given in %s (%d lines): "+
		"a consistency proof from the hash store leads from its root to the tree of the lines read\n", kt.path, cp.N, name, cp.N))
}

// A record copied whole from the checkpoints sidecar ends with the blank
// line that parts records there; it is the same signed note.
func TestVerifyGivenCheckpointCopiedWithItsBlankLine(t *testing.T) {
	path, _, pub := sealedFixture(t)
	saved := savedCheckpoint(t, path, pub, 6)
	b, err := os.ReadFile(saved)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(saved, append(b, '\n'), 0o600))
	res := run(t, "", "verify", "--key", pub, "--checkpoint", saved, path)
	require.Equal(t, exitOK, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "are in the checkpoint given in "+saved)
}
