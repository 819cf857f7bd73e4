package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/witness"
	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

// A witness cosigns the one log across rotations (each checkpoint extends
// the one before, segments included), and verify --witness checks the
// trail's directory against its cosignatures.
func TestVerifyWitnessedRotatedTrail(t *testing.T) {
	dir := t.TempDir()
	sealer, pub, vkey, fake := oneWitnessSealer(t, dir)
	path, segs := sealedRotatedTrail(t, dir, sealer, filesink.Rotation{MaxBytes: 2 << 10, Compress: true})
	require.Greater(t, len(segs), 5)

	res := run(t, "", "verify", "--key", pub, "--witness", vkey, filepath.Dir(path))
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "witness: lines=80 witnessed=80 unwitnessed=0")
	require.Equal(t, int64(80), fake.Size("cli-test/events.jsonl"), "the witness's tree is the whole log")
}

// oneWitnessSealer makes the signing key cli-test under dir/keys and a fake
// witness, w1.example/w, whose verifier key it writes to dir/keys/w1.vkey:
// the sealer it returns has that witness cosign each checkpoint.
func oneWitnessSealer(t *testing.T, dir string) (sealer *integrity.Sealer, pub, vkey string, fake *witnesstest.Fake) {
	t.Helper()
	res := run(t, "", "keygen", "--name", "cli-test", "--out", filepath.Join(dir, "keys"))
	require.Equal(t, 0, res.code, res.stderr)
	keys, err := integrity.LoadSigningKey(filepath.Join(dir, "keys", "cli-test.key"))
	require.NoError(t, err)
	pub = filepath.Join(dir, "keys", "cli-test.pub")
	fake = witnesstest.Start(t, "w1.example/w", keys.Verifier)
	w, err := witness.NewWitness(fake.URL, fake.VKey, nil, nil)
	require.NoError(t, err)
	pool, err := witness.NewPool([]*witness.Witness{w}, 1, nil, nil)
	require.NoError(t, err)
	vkey = filepath.Join(dir, "keys", "w1.vkey")
	require.NoError(t, os.WriteFile(vkey, []byte(fake.VKey+"\n"), 0o644))
	sealer, err = integrity.NewSealer(integrity.Settings{Keys: keys, Interval: time.Second, Witnesses: pool})
	require.NoError(t, err)
	return sealer, pub, vkey, fake
}

// A line edited in a segment by someone without the key fails the log's
// own checks and the witnesses'; the witness line must not say the lines
// were signed again, which only the key holder can do.
func TestVerifyWitnessEditedSegmentIsNotCalledResigned(t *testing.T) {
	res, _ := verifyWitnessedEdited(t, 1)
	require.Contains(t, res.stdout, "which witnesses [w1.example/w")
	require.Contains(t, res.stdout, "lines were changed after the witnesses saw them (the log's own checkpoints do not hold them either)")
	require.NotContains(t, res.stdout, "re-signed")
}

// verifyWitnessedEdited runs verify --witness on a witnessed rotated trail
// (sealedRotatedTrail, more than three segments) whose segment at index
// edit (from the end when negative: -1 is the newest) has its first exec
// made a read, and requires it to fail. It returns the result and the
// segments.
func verifyWitnessedEdited(t *testing.T, edit int) (result, []filesink.Segment) {
	t.Helper()
	dir := t.TempDir()
	sealer, pub, vkey, _ := oneWitnessSealer(t, dir)
	path, segs := sealedRotatedTrail(t, dir, sealer, filesink.Rotation{MaxBytes: 2 << 10})
	require.Greater(t, len(segs), 3)
	if edit < 0 {
		edit += len(segs)
	}
	seg := segs[edit]
	data, err := os.ReadFile(seg.Path)
	require.NoError(t, err)
	edited := bytes.Replace(data, []byte(`"exec"`), []byte(`"read"`), 1)
	require.NotEqual(t, data, edited)
	require.NoError(t, os.WriteFile(seg.Path, edited, 0o600))

	res := run(t, "", "verify", "--key", pub, "--witness", vkey, filepath.Dir(path))
	require.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
	return res, segs
}

// sealedRotatedTrail writes 40 operations of one session to a rotating
// file sink at dir/trail/events.jsonl, sealing after each, and returns the
// path and its segments.
func sealedRotatedTrail(t *testing.T, dir string, sealer *integrity.Sealer, rot filesink.Rotation) (string, []filesink.Segment) {
	t.Helper()
	path := filepath.Join(dir, "trail", "events.jsonl")
	sink, err := filesink.New(filesink.Options{Path: path, OnWrite: sealer.Wrote, Rotation: &rot})
	require.NoError(t, err)
	ctx := context.Background()
	for i := range 40 {
		s, f := op(sessionA, "exec", fmt.Sprintf("a%015d", i), int64(2*i+1), int64(2*i+2))
		require.NoError(t, sink.WriteBatch(ctx, sessionA.String(), []byte(canonLines(s, f))))
		require.NoError(t, sealer.SealPending(ctx))
	}
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(ctx))
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	return path, segs
}
