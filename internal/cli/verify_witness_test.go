package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/torchwood"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/witness"
	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

// witnessedFixture is sealedFixture's file sealed with two fake witnesses
// cosigning (quorum 2): checkpoints of 6 and 8 lines, both cosigned.
func witnessedFixture(t *testing.T) (path, keyPath, pubPath string, wkeys []string, fakes []*witnesstest.Fake) {
	t.Helper()
	dir := t.TempDir()
	res := run(t, "", "keygen", "--name", "cli-test", "--out", filepath.Join(dir, "keys"))
	require.Equal(t, 0, res.code, res.stderr)
	keyPath, pubPath = filepath.Join(dir, "keys", "cli-test.key"), filepath.Join(dir, "keys", "cli-test.pub")
	keys, err := integrity.LoadSigningKey(keyPath)
	require.NoError(t, err)
	for i, name := range []string{"w1.example/w", "w2.example/w"} {
		f := witnesstest.Start(t, name, keys.Verifier)
		fakes = append(fakes, f)
		p := filepath.Join(dir, "keys", "w"+string(rune('1'+i))+".vkey")
		require.NoError(t, os.WriteFile(p, []byte(f.VKey+"\n"), 0o644))
		wkeys = append(wkeys, p)
	}
	pool, err := witness.NewPool(witnesstest.Witnesses(t, fakes...), 2, nil, nil)
	require.NoError(t, err)
	path = filepath.Join(dir, "audit.jsonl")
	s1, f1 := op(sessionA, "exec", "a000000000000001", 1, 2)
	s2, f2 := op(sessionB, "read", "b000000000000001", 1, 2)
	s3, f3 := op(sessionA, "write", "a000000000000002", 3, 4)
	s4, f4 := op(sessionA, "stop", "a000000000000003", 5, 6)
	appendFlocked(t, path, canonLines(s1, f1, s2, f2, s3, f3))
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: 1e9, Witnesses: pool})
	require.NoError(t, err)
	require.NoError(t, sealer.Seal(context.Background(), path))
	appendFlocked(t, path, canonLines(s4, f4))
	require.NoError(t, sealer.Seal(context.Background(), path))
	require.NoError(t, sealer.Close(context.Background())) // the collector stopped
	return path, keyPath, pubPath, wkeys, fakes
}

func TestVerifyWitnessPassesAWitnessedTrail(t *testing.T) {
	path, _, pubPath, wkeys, _ := witnessedFixture(t)
	res := run(t, "", "verify", "--key", pubPath, "--witness", wkeys[0], "--witness", wkeys[1], path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "witness: lines=8 witnessed=8 unwitnessed=0 records=2 quorum=2/2")

	// A witness verify does not trust: its cosignatures do not count.
	other := witnesstest.Start(t, "other.example/w", nil)
	op := filepath.Join(t.TempDir(), "other.vkey")
	require.NoError(t, os.WriteFile(op, []byte(other.VKey), 0o644))
	res = run(t, "", "verify", "--key", pubPath, "--witness", wkeys[0], "--witness", op, path)
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stdout, "no checkpoint is cosigned by 2 of the 2 witnesses")
	res = run(t, "", "verify", "--key", pubPath, "--witness", wkeys[0], "--witness", op, "--quorum", "1", path)
	require.Equal(t, 0, res.code, res.stdout)
}

// The attacks verify --witness refuses, each on a fresh copy.
func TestVerifyWitnessRefusesAttacks(t *testing.T) {
	tests := []struct {
		name   string
		attack func(t *testing.T, path, keyPath string)
		want   string
	}{
		{"key holder re-seals an edited file", func(t *testing.T, path, keyPath string) {
			ls := fileLines(t, path)
			ls[3] = strings.Replace(ls[3], `"duration_ms":1.5`, `"duration_ms":9.5`, 1)
			writeLines(t, path, ls)
			reseal(t, path, keyPath, false)
		}, "do not match checkpoint #1, which witnesses"},
		{"re-sealed, witnessed sidecar removed", func(t *testing.T, path, keyPath string) {
			ls := fileLines(t, path)
			ls[3] = strings.Replace(ls[3], `"duration_ms":1.5`, `"duration_ms":9.5`, 1)
			writeLines(t, path, ls)
			reseal(t, path, keyPath, true)
		}, "no checkpoint is cosigned by 2 of the 2 witnesses"},
		{"lines appended and sealed, not witnessed", func(t *testing.T, path, keyPath string) {
			s, f := op(sessionB, "stop", "b000000000000009", 3, 4)
			appendFlocked(t, path, canonLines(s, f))
			keys, err := integrity.LoadSigningKey(keyPath)
			require.NoError(t, err)
			sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: 1e9})
			require.NoError(t, err)
			require.NoError(t, sealer.Seal(context.Background(), path))
		}, "2 lines after the newest checkpoint the witnesses cosigned (line 8)"},
		{"cut back below the witnessed size", func(t *testing.T, path, keyPath string) {
			writeLines(t, path, fileLines(t, path)[:7])
			reseal(t, path, keyPath, false)
		}, "covers 8 lines, but the file has only 7: cut back"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path, keyPath, pubPath, wkeys, _ := witnessedFixture(t)
			tc.attack(t, path, keyPath)
			res := run(t, "", "verify", "--key", pubPath, path)
			t.Logf("verify --key alone: %d\n%s", res.code, res.stdout)
			res = run(t, "", "verify", "--key", pubPath, "--witness", wkeys[0], "--witness", wkeys[1], path)
			require.Equal(t, 1, res.code, res.stdout+res.stderr)
			require.Contains(t, res.stdout, tc.want)
		})
	}
}

// The re-sealed file passes verify --key alone: only the witnesses tell.
func TestVerifyKeyAlonePassesAResealedFile(t *testing.T) {
	path, keyPath, pubPath, _, _ := witnessedFixture(t)
	ls := fileLines(t, path)
	ls[3] = strings.Replace(ls[3], `"duration_ms":1.5`, `"duration_ms":9.5`, 1)
	writeLines(t, path, ls)
	reseal(t, path, keyPath, false)
	res := run(t, "", "verify", "--key", pubPath, path)
	require.Equal(t, 0, res.code, res.stdout)
}

func TestVerifyWitnessAllowsABoundedTail(t *testing.T) {
	path, keyPath, pubPath, wkeys, _ := witnessedFixture(t)
	s, f := op(sessionB, "stop", "b000000000000009", 3, 4)
	appendFlocked(t, path, canonLines(s, f))
	keys, err := integrity.LoadSigningKey(keyPath)
	require.NoError(t, err)
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: 1e9})
	require.NoError(t, err)
	require.NoError(t, sealer.Seal(context.Background(), path))
	args := []string{"verify", "--key", pubPath, "--witness", wkeys[0], "--witness", wkeys[1], path}
	res := run(t, "", append(args, "--allow-unwitnessed", "2")...)
	require.Equal(t, 0, res.code, res.stdout)
	require.Contains(t, res.stdout, "accepting 2 unwitnessed lines (--allow-unwitnessed 2)")
	res = run(t, "", append(args, "--allow-unwitnessed", "1")...)
	require.Equal(t, 1, res.code, res.stdout)
}

func TestVerifyWitnessFlagErrors(t *testing.T) {
	path, _, pubPath, wkeys, _ := witnessedFixture(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--witness", wkeys[0], path}, "--witness needs --key"},
		{[]string{"--key", pubPath, "--quorum", "1", path}, "--quorum and --allow-unwitnessed need --witness"},
		{[]string{"--key", pubPath, "--witness", wkeys[0], "--quorum", "2", path}, "--quorum: must be between 1 and the 1 witnesses, got 2"},
		{[]string{"--key", pubPath, "--witness", pubPath, path}, "holds the log's own key (--key)"},
		{[]string{"--key", pubPath, "--witness", wkeys[0], "--witness", wkeys[1], "--witness", copyFile(t, wkeys[0]), path},
			"is the same witness key as " + wkeys[0] + " (w1.example/w)"},
		// One key under another name: a cosignature signs no name, so
		// one witness's would count twice.
		{[]string{"--key", pubPath, "--witness", wkeys[0], "--witness", aliasKeyFile(t, wkeys[0], "alias.example/w"), path},
			"is the same witness key as " + wkeys[0] + " (w1.example/w)"},
	} {
		res := run(t, "", append([]string{"verify"}, tc.args...)...)
		require.Equal(t, 2, res.code, "%v: %s", tc.args, res.stdout)
		require.Contains(t, res.stderr, tc.want)
	}
}

// aliasKeyFile writes the witness key of vkeyPath under another name to a
// new file.
func aliasKeyFile(t *testing.T, vkeyPath, name string) string {
	t.Helper()
	b, err := os.ReadFile(vkeyPath)
	require.NoError(t, err)
	v, err := witness.ParseKey(string(b))
	require.NoError(t, err)
	alias, err := torchwood.NewCosignatureVerifierFromKey(name, v.PublicKey())
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "alias.vkey")
	require.NoError(t, os.WriteFile(p, []byte(alias.String()+"\n"), 0o644))
	return p
}

// copyFile copies path to a new file in a fresh directory.
func copyFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), filepath.Base(path))
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

// reseal signs the file's current lines afresh with the log's key, as an
// attacker holding it does: the store and checkpoints are rebuilt, and
// the witnessed sidecar kept or removed.
func reseal(t *testing.T, path, keyPath string, dropWitnessed bool) {
	t.Helper()
	remove := []string{integrity.StorePath(path), integrity.CheckpointsPath(path)}
	if dropWitnessed {
		remove = append(remove, integrity.WitnessedPath(path))
	}
	for _, p := range remove {
		require.NoError(t, os.Remove(p))
	}
	keys, err := integrity.LoadSigningKey(keyPath)
	require.NoError(t, err)
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: 1e9})
	require.NoError(t, err)
	require.NoError(t, sealer.Seal(context.Background(), path))
}

// A rotated, compressed trail sealed with two witnesses cosigning: verify
// --witness checks the cosigned checkpoints across the segments, and
// refuses the trail once the key holder re-seals an edited copy.
func TestVerifyWitnessOnATrail(t *testing.T) {
	for _, backups := range []int{0, 2} {
		t.Run(fmt.Sprintf("max_backups=%d", backups), func(t *testing.T) { witnessedTrail(t, backups) })
	}
}

// witnessedTrail writes a rotated trail cosigned by a fake witness, checks
// verify passes it, and returns the audit path, the log's public key and
// the witness's key file.
func witnessedTrail(t *testing.T, maxBackups int) (path, pub, wkey string) {
	dir := t.TempDir()
	res := run(t, "", "keygen", "--name", "cli-test", "--out", filepath.Join(dir, "keys"))
	require.Equal(t, 0, res.code, res.stderr)
	keys, err := integrity.LoadSigningKey(filepath.Join(dir, "keys", "cli-test.key"))
	require.NoError(t, err)
	pub = filepath.Join(dir, "keys", "cli-test.pub")
	fw := witnesstest.Start(t, "w1.example/w", keys.Verifier)
	w, err := witness.NewWitness(fw.URL, fw.VKey, nil, nil)
	require.NoError(t, err)
	pool, err := witness.NewPool([]*witness.Witness{w}, 1, nil, nil)
	require.NoError(t, err)
	wkey = filepath.Join(dir, "w1.vkey")
	require.NoError(t, os.WriteFile(wkey, []byte(fw.VKey), 0o644))
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: time.Second, Witnesses: pool})
	require.NoError(t, err)
	path = filepath.Join(dir, "trail", "events.jsonl")
	sink, err := filesink.New(filesink.Options{Path: path, OnWrite: sealer.Wrote,
		Rotation: &filesink.Rotation{MaxBytes: 4 << 10, MaxBackups: maxBackups, BeforeRemove: sealer.Retire}})
	require.NoError(t, err)
	ctx := context.Background()
	for i := range 40 {
		s, f := op(sessionA, "exec", fmt.Sprintf("a%015d", i), int64(2*i+1), int64(2*i+2))
		require.NoError(t, sink.WriteBatch(ctx, sessionA.String(), []byte(canonLines(s, f))))
		if i%5 == 4 {
			require.NoError(t, sealer.SealPending(ctx))
		}
	}
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(ctx))
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(segs), 2)

	res = run(t, "", "verify", "--key", pub, "--witness", wkey, "--allow-open", filepath.Dir(path))
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	if maxBackups > 0 {
		require.Contains(t, res.stdout, "retired=")
		require.NotContains(t, res.stdout, "retired=0 ")
	}
	require.Contains(t, res.stdout, "witness: lines=80 witnessed=80 unwitnessed=0")
	require.Equal(t, int64(80), fw.Size("cli-test/events.jsonl"))
	return path, pub, wkey
}

// A witness problem in a rotated trail names the segment and its line, not
// the line of the log as if it were the active file's.
func TestVerifyWitnessOnATrailNamesTheSegment(t *testing.T) {
	path, pub, wkey := witnessedTrail(t, 0)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	lines := fileLines(t, segs[0].Path)
	require.GreaterOrEqual(t, len(lines), 10)
	lines[1] = strings.Replace(lines[1], `"op":"exec"`, `"op":"read"`, 1)
	writeLines(t, segs[0].Path, lines)
	res := run(t, "", "verify", "--key", pub, "--witness", wkey, "--allow-open", filepath.Dir(path))
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stdout, segs[0].Path+":10: witness: the first 10 lines do not match checkpoint #1")
}

// A --witness key that cosigned nothing in the sidecar, which holds other
// witnesses' cosignatures: verify names them, so a wrong key file reads
// as one, not as a removed sidecar.
func TestVerifyWitnessNamesTheKeysThatCosigned(t *testing.T) {
	path, _, pubPath, _, _ := witnessedFixture(t)
	keys, err := integrity.LoadVerifierKey(pubPath)
	require.NoError(t, err)
	other := witnesstest.Start(t, "w3.example/w", keys)
	wkey := filepath.Join(t.TempDir(), "w3.vkey")
	require.NoError(t, os.WriteFile(wkey, []byte(other.VKey+"\n"), 0o644))
	res := run(t, "", "verify", "--key", pubPath, "--witness", wkey, path)
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stdout, "no checkpoint is cosigned by 1 of the 1 witnesses: the witnessed sidecar holds "+
		"cosignatures only by keys not given (w1.example/w+")
	require.Contains(t, res.stdout, ", w2.example/w+")
	require.Contains(t, res.stdout, "): check the --witness key files")
}

// The key names verify shows from the witnessed sidecar are anyone's who
// can write it: a name with a bidirectional override is shown escaped, so
// it cannot reorder what the terminal shows.
func TestVerifyWitnessEscapesTheNamesItShows(t *testing.T) {
	path, _, pubPath, wkeys, _ := witnessedFixture(t)
	b, err := os.ReadFile(integrity.WitnessedPath(path))
	require.NoError(t, err)
	b = []byte(strings.ReplaceAll(string(b), "\u2014 w2.example/w ", "\u2014 w2.example/\u202ew "))
	require.NoError(t, os.WriteFile(integrity.WitnessedPath(path), b, 0o600))
	other := filepath.Join(t.TempDir(), "w3.vkey")
	keys, err := integrity.LoadVerifierKey(pubPath)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(other, []byte(witnesstest.Start(t, "w3.example/w", keys).VKey+"\n"), 0o644))
	res := run(t, "", "verify", "--key", pubPath, "--witness", other, path)
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stdout, "w2.example/\\u202ew+")
	require.NotContains(t, res.stdout, "\u202e")

	// A record the log's key did not sign names the keys that did.
	b = []byte(strings.ReplaceAll(string(b), "\u2014 cli-test ", "\u2014 cli-\u202etest "))
	require.NoError(t, os.WriteFile(integrity.WitnessedPath(path), b, 0o600))
	res = run(t, "", "verify", "--key", pubPath, "--witness", wkeys[0], path)
	require.Equal(t, 1, res.code, res.stdout)
	// The collector prints this error too, so integrity escapes the name
	// where it leaves the file, and verify's output escapes it again.
	require.Contains(t, res.stdout, "cli-\\\\u202etest+")
	require.NotContains(t, res.stdout, "\u202e")
}

// A witness cosigns a tree of one origin: the key holder who rewrites a
// log, has the same witnesses cosign the rewritten lines under another
// origin (a path they never saw, so any tree is consistent), and puts
// those cosignatures beside the log, has them vouch for nothing.
func TestVerifyWitnessRefusesAnotherLogsCosignatures(t *testing.T) {
	path, keyPath, pubPath, wkeys, fakes := witnessedFixture(t)
	ls := fileLines(t, path)
	ls[3] = strings.Replace(ls[3], `"duration_ms":1.5`, `"duration_ms":9.5`, 1)

	other := filepath.Join(filepath.Dir(path), "other.jsonl")
	writeLines(t, other, ls)
	keys, err := integrity.LoadSigningKey(keyPath)
	require.NoError(t, err)
	pool, err := witness.NewPool(witnesstest.Witnesses(t, fakes...), 2, nil, nil)
	require.NoError(t, err)
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: 1e9, Witnesses: pool})
	require.NoError(t, err)
	require.NoError(t, sealer.Seal(context.Background(), other))
	require.NoError(t, sealer.Close(context.Background()))

	writeLines(t, path, ls)
	reseal(t, path, keyPath, true)
	b, err := os.ReadFile(integrity.WitnessedPath(other))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(integrity.WitnessedPath(path), b, 0o600))

	res := run(t, "", "verify", "--key", pubPath, "--witness", wkeys[0], "--witness", wkeys[1], path)
	require.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, `witness: cosigned checkpoint #1 is of the log "cli-test/other.jsonl", not of this log "cli-test/audit.jsonl"`)
}

// Five ML-DSA-44 witnesses: each cosignature line is about 3 KB, so a
// cosigned record holds more than a checkpoint's 16 KiB. The sealer
// records it whole, and verify reads it.
func TestVerifyWitnessReadsLargeCosignatures(t *testing.T) {
	dir := t.TempDir()
	res := run(t, "", "keygen", "--name", "cli-test", "--out", filepath.Join(dir, "keys"))
	require.Equal(t, 0, res.code, res.stderr)
	keys, err := integrity.LoadSigningKey(filepath.Join(dir, "keys", "cli-test.key"))
	require.NoError(t, err)
	args := []string{"verify", "--key", filepath.Join(dir, "keys", "cli-test.pub")}
	var fakes []*witnesstest.Fake
	for i := range 5 {
		f := witnesstest.StartMLDSA(t, fmt.Sprintf("w%d.example/pq", i), keys.Verifier)
		fakes = append(fakes, f)
		p := filepath.Join(dir, "keys", fmt.Sprintf("w%d.vkey", i))
		require.NoError(t, os.WriteFile(p, []byte(f.VKey+"\n"), 0o644))
		args = append(args, "--witness", p)
	}
	pool, err := witness.NewPool(witnesstest.Witnesses(t, fakes...), 5, nil, nil)
	require.NoError(t, err)
	path := filepath.Join(dir, "audit.jsonl")
	s1, f1 := op(sessionA, "exec", "a000000000000001", 1, 2)
	appendFlocked(t, path, canonLines(s1, f1))
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: 1e9, Witnesses: pool})
	require.NoError(t, err)
	require.NoError(t, sealer.Seal(context.Background(), path))
	require.NoError(t, sealer.Close(context.Background()))
	fi, err := os.Stat(integrity.WitnessedPath(path))
	require.NoError(t, err)
	require.Greater(t, fi.Size(), int64(16<<10), "the record is larger than a checkpoint may be")

	res = run(t, "", append(args, path)...)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "witness: lines=2 witnessed=2 unwitnessed=0 records=1 quorum=5/5")
}
