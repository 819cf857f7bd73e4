package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/tlog"
	"golang.org/x/sys/unix"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// sealedFixture writes an audit file the way a collector and a Python
// JsonlOutboxSink sharing it would, sealing twice (two checkpoints):
//
//	1-2 session A exec (collector)   3-4 session B read (collector)
//	5-6 session A write (collector)  -- checkpoint #1 (6 lines) --
//	7-8 session A stop (Python sink) -- checkpoint #2 (8 lines) --
func sealedFixture(t *testing.T) (path, keyPath, pubPath string) {
	t.Helper()
	dir := t.TempDir()
	res := run(t, "", "keygen", "--name", "cli-test", "--out", filepath.Join(dir, "keys"))
	require.Equal(t, 0, res.code, res.stderr)
	keyPath, pubPath = filepath.Join(dir, "keys", "cli-test.key"), filepath.Join(dir, "keys", "cli-test.pub")
	keys, err := integrity.LoadSigningKey(keyPath)
	require.NoError(t, err)

	path = filepath.Join(dir, "audit.jsonl")
	s1, f1 := op(sessionA, "exec", "a000000000000001", 1, 2)
	s2, f2 := op(sessionB, "read", "b000000000000001", 1, 2)
	s3, f3 := op(sessionA, "write", "a000000000000002", 3, 4)
	s4, f4 := op(sessionA, "stop", "a000000000000003", 5, 6)
	appendFlocked(t, path, canonLines(s1, f1, s2, f2, s3, f3))
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: 1e9})
	require.NoError(t, err)
	require.NoError(t, sealer.Seal(context.Background(), path))
	appendFlocked(t, path, canonLines(s4, f4)) // the Python sink's lines
	require.NoError(t, sealer.Seal(context.Background(), path))
	require.NoError(t, sealer.Close(context.Background())) // the collector stopped
	return path, keyPath, pubPath
}

// appendFlocked appends under flock(LOCK_EX) as JsonlOutboxSink does.
func appendFlocked(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	require.NoError(t, unix.Flock(int(f.Fd()), unix.LOCK_EX))
	_, err = f.WriteString(text)
	require.NoError(t, err)
}

func fileLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
}

func writeLines(t *testing.T, path string, ls []string) {
	t.Helper()
	out := strings.Join(ls, "")
	if !strings.HasSuffix(out, "\n") && out != "" {
		out += "\n"
	}
	require.NoError(t, os.WriteFile(path, []byte(out), 0o600))
}

func TestVerifyKeyDetectsTampering(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(t *testing.T, path string)
		want   string // in stdout: names the first failing line or checkpoint
	}{
		{"changed digit of duration_ms", func(t *testing.T, path string) {
			ls := fileLines(t, path)
			require.Contains(t, ls[1], `"duration_ms":1.5`)
			ls[1] = strings.Replace(ls[1], `"duration_ms":1.5`, `"duration_ms":7.5`, 1)
			writeLines(t, path, ls)
		}, ":2: integrity: line 2: changed, removed or moved"},
		{"deleted start/finish pair", func(t *testing.T, path string) {
			ls := fileLines(t, path)
			writeLines(t, path, append(ls[:2:2], ls[4:]...))
		}, ":3: integrity: line 3:"},
		{"two lines swapped", func(t *testing.T, path string) {
			ls := fileLines(t, path)
			ls[4], ls[5] = ls[5], ls[4]
			writeLines(t, path, ls)
		}, ":5: integrity: line 5:"},
		{"duplicated line", func(t *testing.T, path string) {
			ls := fileLines(t, path)
			writeLines(t, path, append(ls[:2:2], append([]string{ls[1]}, ls[2:]...)...))
		}, ":3: integrity: line 3:"},
		{"changed line of the Python sink", func(t *testing.T, path string) {
			ls := fileLines(t, path)
			ls[7] = strings.Replace(ls[7], `"ok":true`, `"ok":false`, 1)
			writeLines(t, path, ls)
		}, ":8: integrity: line 8:"},
		{"whole session removed", func(t *testing.T, path string) {
			var keep []string
			for _, l := range fileLines(t, path) {
				if !strings.Contains(l, sessionB.String()) {
					keep = append(keep, l)
				}
			}
			writeLines(t, path, keep)
		}, ":3: integrity: line 3:"},
		{"truncated below the newest checkpoint", func(t *testing.T, path string) {
			writeLines(t, path, fileLines(t, path)[:7])
		}, "checkpoint #2 covers 8 lines but the file has only 7 complete ones (cut back"},
		{"checkpoint signed by another key", func(t *testing.T, path string) {
			other := run(t, "", "keygen", "--name", "cli-test", "--out", filepath.Join(t.TempDir(), "k"))
			require.Equal(t, 0, other.code)
			keys, err := integrity.LoadSigningKey(strings.TrimSpace(strings.TrimPrefix(strings.Split(other.stdout, "\n")[0], "signing key (keep secret, mode 0600): ")))
			require.NoError(t, err)
			forged, err := integrity.SignCheckpoint(integrity.Checkpoint{Origin: "cli-test/audit.jsonl", N: 8}, keys.Signer)
			require.NoError(t, err)
			cps := integrity.CheckpointsPath(path)
			data, err := os.ReadFile(cps)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(cps, integrity.AppendRecord(data, forged), 0o600))
		}, "checkpoint #3: not signed by key cli-test+"},
		{"changed value with the hash store deleted", func(t *testing.T, path string) {
			changeDuration(t, path)
			require.NoError(t, os.Remove(integrity.StorePath(path)))
		}, ":1: integrity: lines 1-6: changed, removed or moved; they do not match the root hash of checkpoint #1 (no hash store"},
		{"changed line with the hash store doctored to blame a line signed before", func(t *testing.T, path string) {
			ls := fileLines(t, path)
			ls[7] = strings.Replace(ls[7], `"ok":true`, `"ok":false`, 1)
			writeLines(t, path, ls)
			f, err := os.OpenFile(integrity.StorePath(path), os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteAt(make([]byte, tlog.HashSize), tlog.StoredHashIndex(0, 1)*tlog.HashSize) // line 2's record hash
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}, ":7: integrity: lines 7-8: changed, removed or moved; they do not match the root hash of checkpoint #2 (the hash store does not match the signed checkpoints either"},
		{"changed line with one record hash of the store doctored to blame its neighbour", func(t *testing.T, path string) {
			ls := fileLines(t, path)
			ls[7] = strings.Replace(ls[7], `"ok":true`, `"ok":false`, 1)
			writeLines(t, path, ls)
			f, err := os.OpenFile(integrity.StorePath(path), os.O_WRONLY, 0)
			require.NoError(t, err)
			// Line 7's record hash only; the interior hashes above it stay.
			_, err = f.WriteAt(make([]byte, tlog.HashSize), tlog.StoredHashIndex(0, 6)*tlog.HashSize)
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}, ":7: integrity: lines 7-8: changed, removed or moved; they do not match the root hash of checkpoint #2 (the hash store does not match the signed checkpoints either"},
		{"changed value with the hash store rebuilt to match", func(t *testing.T, path string) {
			changeDuration(t, path)
			rebuildStore(t, path)
		}, "(the hash store agrees with the file, so the store was rebuilt or changed too, or the checkpoints are another file's"},
		{"changed value with the hash store emptied", func(t *testing.T, path string) {
			changeDuration(t, path)
			require.NoError(t, os.WriteFile(integrity.StorePath(path), nil, 0o600))
		}, "(the hash store holds only 0 lines, so it cannot tell which line)"},
		{"checkpoints removed, hash store kept", func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(integrity.CheckpointsPath(path), nil, 0o600))
		}, "but the hash store holds the hashes of 8 lines: the checkpoints were removed, or the first seal was cut short"},
		{"last newline removed", func(t *testing.T, path string) {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, b[:len(b)-1], 0o600))
		}, "checkpoint #2 covers 8 lines but the file has only 7 complete ones, and a torn last line without its newline"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path, _, pub := sealedFixture(t)
			ok := run(t, "", "verify", "--key", pub, path)
			require.Equal(t, 0, ok.code, ok.stdout)
			require.Contains(t, ok.stdout, "integrity: lines=8 sealed=8 unsealed=0 checkpoints=2")

			tc.tamper(t, path)
			res := run(t, "", "verify", "--key", pub, "--allow-duplicates", path)
			require.Equal(t, exitProblems, res.code, res.stdout)
			require.Contains(t, res.stdout, tc.want)
			require.Contains(t, res.stdout, "(sealed and checkpoints count only what passed before the failure)")
			require.Contains(t, res.stdout, "FAILED")
		})
	}
}

// A checkpoint of one line is worded in the singular: the tamper-evidence
// walkthrough gets one when a seal falls between its two posts.
func TestVerifyKeyNamesOneSealedLine(t *testing.T) {
	dir := t.TempDir()
	res := run(t, "", "keygen", "--name", "cli-test", "--out", filepath.Join(dir, "keys"))
	require.Equal(t, 0, res.code, res.stderr)
	keys, err := integrity.LoadSigningKey(filepath.Join(dir, "keys", "cli-test.key"))
	require.NoError(t, err)
	path := filepath.Join(dir, "audit.jsonl")
	s, f := op(sessionA, "exec", "a000000000000001", 1, 2)
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: 1e9})
	require.NoError(t, err)
	appendFlocked(t, path, canonLines(s))
	require.NoError(t, sealer.Seal(context.Background(), path))
	appendFlocked(t, path, canonLines(f))
	require.NoError(t, sealer.Seal(context.Background(), path))
	require.NoError(t, sealer.Close(context.Background()))

	ls := fileLines(t, path)
	ls[0] = strings.Replace(ls[0], `"exec"`, `"read"`, 1)
	writeLines(t, path, ls)
	res = run(t, "", "verify", "--key", filepath.Join(dir, "keys", "cli-test.pub"), path)
	require.Equal(t, exitProblems, res.code, res.stdout)
	require.Contains(t, res.stdout, ":1: integrity: line 1: changed, removed or moved; the first line does not match the root hash of checkpoint #1\n")
}

// A damaged hash store (derived data) with the lines and checkpoints
// intact is a warning naming the store, not a failure pointing at the
// checkpoints: the collector's refusal tells the operator that a passing
// `verify --key` means the store is what was damaged.
func TestVerifyKeyWithADamagedStoreWarns(t *testing.T) {
	path, _, pub := sealedFixture(t)
	store := damageStore(t, path)
	res := run(t, "", "verify", "--key", pub, path)
	require.Equal(t, 0, res.code, res.stdout)
	require.Contains(t, res.stdout, store+": integrity: warning: the hash store is damaged (the hash it holds over lines 1-2 of the log is not the one their own hashes give")
	require.Contains(t, res.stdout, "integrity: lines=8 sealed=8 unsealed=0 checkpoints=2")
}

// damageStore garbles every byte of path's hash store and returns its
// path: the lines and checkpoints stay intact.
func damageStore(t *testing.T, path string) string {
	t.Helper()
	store := integrity.StorePath(path)
	b, err := os.ReadFile(store)
	require.NoError(t, err)
	for i := range b {
		b[i] ^= 0x5a
	}
	require.NoError(t, os.WriteFile(store, b, 0o600))
	return store
}

// With a failure as well, the warning does not say the lines are intact:
// only those the last checkpoint that matched covers are.
func TestVerifyKeyWithADamagedStoreAndAFailure(t *testing.T) {
	path, _, pub := sealedFixture(t)
	damageStore(t, path)
	cps := integrity.CheckpointsPath(path)
	data, err := os.ReadFile(cps)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cps, append(data, "garbage\n"...), 0o600))

	res := run(t, "", "verify", "--key", pub, path)
	require.Equal(t, exitProblems, res.code, res.stdout)
	require.Contains(t, res.stdout, "checkpoint #3: ")
	require.Contains(t, res.stdout, "the hash store is damaged (the hash it holds over lines 1-2 of the log is not the one their own hashes give")
	require.Contains(t, res.stdout, "; the lines checkpoint #2 covers are intact.")
	require.NotContains(t, res.stdout, "the lines are intact")
}

// A symlink in the hash store's place is not followed, and not ignored in
// silence either.
func TestVerifyKeyWarnsOfASymlinkedStore(t *testing.T) {
	path, _, pub := sealedFixture(t)
	store := integrity.StorePath(path)
	require.NoError(t, os.Rename(store, store+".real"))
	require.NoError(t, os.Symlink(store+".real", store))
	res := run(t, "", "verify", "--key", pub, path)
	require.Equal(t, 0, res.code, res.stdout)
	require.Contains(t, res.stdout, store+": integrity: warning: the hash store is not used (")

	// With a changed line, nothing claims the lines are intact.
	changeDuration(t, path)
	res = run(t, "", "verify", "--key", pub, path)
	require.Equal(t, exitProblems, res.code, res.stdout)
	require.Contains(t, res.stdout, "the hash store is not used")
	require.NotContains(t, res.stdout, "intact")
}

func TestVerifyKeyWithoutCheckpointsFails(t *testing.T) {
	path, _, pub := sealedFixture(t)
	require.NoError(t, os.Remove(integrity.CheckpointsPath(path)))
	res := run(t, "", "verify", "--key", pub, path)
	require.Equal(t, exitProblems, res.code)
	require.Contains(t, res.stdout, "no checkpoint to check against")
	// Plain verify still passes: only the integrity check needs sidecars.
	require.Equal(t, exitOK, run(t, "", "verify", path).code)
}

func TestVerifyKeyUsage(t *testing.T) {
	path, keyPath, pub := sealedFixture(t)
	res := run(t, "", "verify", "--key", pub, "-")
	require.Equal(t, exitUsage, res.code)
	// The signing key is not a verifier key, and its bytes are not echoed.
	res = run(t, "", "verify", "--key", keyPath, path)
	require.Equal(t, exitUsage, res.code)
	require.Contains(t, res.stderr, "is a signing key (NAME.key); give its verifier key, NAME.pub")
	secret, _ := os.ReadFile(keyPath)
	require.NotContains(t, res.stderr, strings.TrimSpace(string(secret))[len("PRIVATE+KEY+"):])
}

func TestProveAndVerifyProof(t *testing.T) {
	path, _, pub := sealedFixture(t)
	res := run(t, "", "prove", path, "--line", "7")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, fileLines(t, path)[6], "the bundle carries the line")
	bundle := filepath.Join(t.TempDir(), "line7.proof")
	require.NoError(t, os.WriteFile(bundle, []byte(res.stdout), 0o600))

	// Checked alone: the audit file and its sidecars are gone.
	require.NoError(t, os.RemoveAll(filepath.Dir(path)+"/audit.jsonl"))
	ok := run(t, "", "verify-proof", "--key", pub, bundle)
	require.Equal(t, 0, ok.code, ok.stdout)
	require.Contains(t, ok.stdout, "OK: line 7 is in cli-test/audit.jsonl at tree size 8")

	forged := strings.Replace(res.stdout, `"seq":5`, `"seq":9`, 1)
	require.NotEqual(t, res.stdout, forged)
	bad := run(t, "", "verify-proof", "--key", pub, "-")
	require.Equal(t, exitProblems, bad.code)
	bad = runStdin(t, forged, "verify-proof", "--key", pub, "-")
	require.Equal(t, exitProblems, bad.code)
	require.Contains(t, bad.stdout, "line 7 is not proven")

	other := filepath.Join(t.TempDir(), "o")
	require.Equal(t, 0, run(t, "", "keygen", "--name", "cli-test", "--out", other).code)
	wrongKey := run(t, "", "verify-proof", "--key", filepath.Join(other, "cli-test.pub"), bundle)
	require.Equal(t, exitProblems, wrongKey.code)
	require.Contains(t, wrongKey.stdout, "not signed by key")

	gone := run(t, "", "prove", path, "--line", "1")
	require.Equal(t, exitProblems, gone.code, "file gone")
	require.Contains(t, gone.stderr, path+": no such file", "the missing file is named, not its sidecar")
	require.NotContains(t, gone.stderr, ".checkpoints")
	zero := run(t, "", "prove", path, "--line", "0")
	require.Equal(t, exitUsage, zero.code)
	require.Contains(t, zero.stderr, "--line must be a line number from 1, got 0")
}

func runStdin(t *testing.T, stdin string, args ...string) result { return run(t, stdin, args...) }

func TestKeygen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new")
	res := run(t, "", "keygen", "--name", "ci", "--out", dir)
	require.Equal(t, 0, res.code, res.stderr)
	fi, err := os.Stat(filepath.Join(dir, "ci.key"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	pub, err := os.ReadFile(filepath.Join(dir, "ci.pub"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(pub), "ci+"), "verifier key %q", pub)
	require.NotContains(t, res.stdout, "PRIVATE", "the key is written, never printed")

	require.Equal(t, exitProblems, run(t, "", "keygen", "--name", "ci", "--out", dir).code, "never overwrites")
	for _, bad := range []string{"../x", "a b", "a+b", ".hidden", ""} {
		require.Equal(t, exitUsage, run(t, "", "keygen", "--name", bad, "--out", dir).code, bad)
	}
	// A name with a control character is shown escaped once, as the
	// command's other output is.
	res = run(t, "", "keygen", "--name", "a\x1bb", "--out", dir)
	require.Equal(t, exitUsage, res.code)
	require.Contains(t, res.stderr, `keygen: --name "a\x1bb": use 1-64`)
}

// A sealed file swapped for another sealed with the same key verifies
// against its own checkpoints, which name the other file: verify fails on
// it, or warns with --allow-renamed (a file renamed with its sidecars
// looks the same). A rotated copy's checkpoints name the file it was
// rotated from, and that is neither.
func TestVerifyKeyFailsWhenTheCheckpointsNameAnotherFile(t *testing.T) {
	path, _, pub := sealedFixture(t)
	dir := t.TempDir()
	for _, suffix := range []string{"", integrity.StoreSuffix, integrity.CheckpointsSuffix} {
		b, err := os.ReadFile(path + suffix)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "other.jsonl"+suffix), b, 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "audit.jsonl.1"+suffix), b, 0o600))
	}
	swapped := run(t, "", "verify", "--key", pub, filepath.Join(dir, "other.jsonl"))
	require.Equal(t, exitProblems, swapped.code, swapped.stdout)
	require.Contains(t, swapped.stdout, `other.jsonl: integrity: the checkpoints name another file (origin "cli-test/audit.jsonl")`)
	require.Contains(t, swapped.stdout, "problems=1")
	renamed := run(t, "", "verify", "--key", pub, "--allow-renamed", filepath.Join(dir, "other.jsonl"))
	require.Equal(t, 0, renamed.code, renamed.stdout)
	require.Contains(t, renamed.stdout, `integrity: warning: the checkpoints name another file (origin "cli-test/audit.jsonl")`)
	rotated := run(t, "", "verify", "--key", pub, filepath.Join(dir, "audit.jsonl.1"))
	require.Equal(t, 0, rotated.code, rotated.stdout)
	require.NotContains(t, rotated.stdout, "warning")
}

// changeDuration changes the duration of the file's second line.
func changeDuration(t *testing.T, path string) {
	t.Helper()
	ls := fileLines(t, path)
	ls[1] = strings.Replace(ls[1], `"duration_ms":1.5`, `"duration_ms":1.6`, 1)
	writeLines(t, path, ls)
}

// rebuildStore writes path's hash store from its lines, as an attacker who
// edited the file would to make the store agree (tlog's stored hashes,
// leaves as the README defines them).
func rebuildStore(t *testing.T, path string) {
	t.Helper()
	var lines []string
	for _, l := range fileLines(t, path) {
		lines = append(lines, strings.TrimSuffix(l, "\n")+"\n")
	}
	require.NoError(t, os.WriteFile(integrity.StorePath(path), storeOf(t, lines), 0o600))
}

// storeOf is the hash store of a log of lines (each with its '\n'):
// tlog's stored hashes, leaves as the README defines them.
func storeOf(t *testing.T, lines []string) []byte {
	t.Helper()
	var stored []tlog.Hash
	r := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = stored[x]
		}
		return out, nil
	})
	for i, l := range lines {
		hs, err := tlog.StoredHashes(int64(i), []byte(l), r)
		require.NoError(t, err)
		stored = append(stored, hs...)
	}
	var b []byte
	for _, h := range stored {
		b = append(b, h[:]...)
	}
	return b
}

// `verify --key audit/events.jsonl*` names the sidecars too: they are left
// out, or an intact trail would fail as bad audit files; a sidecar named
// without its file is still read, and fails.
func TestVerifySkipsTheSidecarsOfNamedFiles(t *testing.T) {
	path, _, pub := sealedFixture(t)
	glob := []string{path, path + integrity.CheckpointsSuffix, path + integrity.StoreSuffix}
	res := run(t, "", append([]string{"verify", "--key", pub}, glob...)...)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "files=1 lines=8")
	require.Contains(t, res.stderr, "skipping "+path+integrity.CheckpointsSuffix)

	res = run(t, "", "verify", path+integrity.CheckpointsSuffix)
	require.NotEqual(t, 0, res.code, res.stdout)
}
