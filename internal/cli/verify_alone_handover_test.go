package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// rotateNewLog writes ops operations to the new log at path, which a
// handover to keyFile left there, rotating every 2 KiB and sealing with
// the key as the collector does, and returns its closed segments.
func rotateNewLog(t *testing.T, path, keyFile string, ops int) []filesink.Segment {
	t.Helper()
	keys, err := integrity.LoadSigningKey(keyFile)
	require.NoError(t, err)
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: time.Second})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, sealer.SealAtStart(ctx, path))
	sink, err := filesink.New(filesink.Options{Path: path, OnWrite: sealer.Wrote, Rotation: &filesink.Rotation{MaxBytes: 2 << 10}})
	require.NoError(t, err)
	for i := range ops {
		s, f := op(sessionB, "read", fmt.Sprintf("c%015d", i), int64(2*i+201), int64(2*i+202))
		require.NoError(t, sink.WriteBatch(ctx, sessionB.String(), []byte(canonLines(s, f))))
		require.NoError(t, sealer.SealPending(ctx))
	}
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(ctx))
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	require.Greater(t, len(segs), 1)
	return segs
}

// handedOverRotatedTwice hands the rotated fixture's log over to a new
// key, writes a rotated new log, then hands that log over to a third key
// and writes a rotated log with it. It returns the path, the first public
// key, the closed segments of the middle log (in its retired directory)
// and of the third, and the middle public key.
func handedOverRotatedTwice(t *testing.T) (path, oldPub string, midSegs, lastSegs []filesink.Segment, midPub string) {
	t.Helper()
	path, _, oldPub, midKey := handOverRotated(t)
	rotateNewLog(t, path, midKey, 30)
	lastKey, lastPub := keyFiles(t, "third")
	res := run(t, "", "log", "handover", "--signing-key", midKey, "--next-key", lastPub, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	// The second retired directory ends in -2 when both handovers fell
	// in the same second.
	matches, err := filepath.Glob(path + ".retired-*")
	require.NoError(t, err)
	mid := ""
	for _, m := range matches {
		if fi, err := os.Stat(m); err != nil || !fi.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(m, "events.jsonl.handover")); err == nil {
			mid = filepath.Join(m, "events.jsonl")
		}
	}
	require.NotEmpty(t, mid, "the middle log's note moved aside with it: %v", matches)
	midSegs, err = filesink.Segments(mid)
	require.NoError(t, err)
	return path, oldPub, midSegs, rotateNewLog(t, path, lastKey, 30), strings.TrimSuffix(midKey, ".key") + ".pub"
}

// verify --alone, given the first key, follows the handover note beside a
// segment's log when that key signed it as its final checkpoint: a
// segment of the log a handover started verifies alone, as the whole
// trail does, and a directory's segments of both logs do too.
func TestVerifyAloneFollowsAHandover(t *testing.T) {
	path, retired, oldPub, newKey := handOverRotated(t)
	segs := rotateNewLog(t, path, newKey, 30)
	newPub := strings.TrimSuffix(newKey, ".key") + ".pub"
	next, err := integrity.LoadVerifierKey(newPub)
	require.NoError(t, err)
	followed := fmt.Sprintf("%s: handover: the log starts from the handover note in %s, the final checkpoint of the log %q that --key signed; "+
		"checked with the key it names, %s\n", path, integrity.HandoverPath(path), "cli-test/events.jsonl", integrity.KeyID(next.Name(), next.KeyHash()))

	res := run(t, "", "verify", "--key", oldPub, "--alone", segs[1].Path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, followed)
	require.Contains(t, res.stdout, segs[1].Path+": integrity: alone first_line=5 lines=4 newest=62")

	res = run(t, "", "verify", "--key", oldPub, "--alone", filepath.Dir(path))
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Equal(t, 1, strings.Count(res.stdout, followed), "once for the log, however many of its segments are read")
	retiredSegs, err := filesink.Segments(retired)
	require.NoError(t, err)
	require.Equal(t, len(segs)+len(retiredSegs), strings.Count(res.stdout, ": integrity: alone first_line="))

	// With the new key, the segment verifies, and verify says the link
	// to the history before it is not checked: once for the log, however
	// many of its segments are read.
	notFollowed := path + ": handover: the log starts from a handover note, and --key is the key it hands over to, " +
		"so its link to the history before it is not checked: give the retiring key as --key to follow the note\n"
	res = run(t, "", "verify", "--key", newPub, "--alone", segs[1].Path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, notFollowed)
	require.GreaterOrEqual(t, len(segs), 2)
	res = run(t, "", "verify", "--key", newPub, "--alone", segs[0].Path, segs[1].Path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Equal(t, 2, strings.Count(res.stdout, ": integrity: alone first_line="), res.stdout)
	require.Equal(t, 1, strings.Count(res.stdout, "the log starts from a handover note, and --key is"), res.stdout)
	require.Contains(t, res.stdout, notFollowed)

	// A segment of the retired log, with the new key: no note hands that
	// log over from the new key, and verify says which key to give.
	res = run(t, "", "verify", "--key", newPub, "--alone", retiredSegs[1].Path)
	require.Equal(t, 1, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "no handover note beside its log hands it over from --key: give --key of the key that signed it, "+
		"or verify the trail, its retired logs included, without --alone, to follow every key handover")
}

// A note beside the new log that the first key signed, but not the one
// the log starts from, is refused; so is a segment whose log's note is
// gone, with the flag to use.
func TestVerifyAloneRefusesAnotherHandoverNote(t *testing.T) {
	path, _, oldPub, newKey := handOverRotated(t)
	segs := rotateNewLog(t, path, newKey, 30)
	oldKey := strings.TrimSuffix(oldPub, ".pub") + ".key"
	keys, err := integrity.LoadSigningKey(oldKey)
	require.NoError(t, err)
	h, signed, found, err := integrity.OpenHandoverNote(path, keys.Verifier)
	require.NoError(t, err)
	require.True(t, found)
	h.N-- // a final checkpoint of fewer lines: another note
	other, err := integrity.SignHandover(h, keys.Signer)
	require.NoError(t, err)
	require.NotEqual(t, signed, other)
	require.NoError(t, os.WriteFile(integrity.HandoverPath(path), other, 0o600))

	res := run(t, "", "verify", "--key", oldPub, "--alone", segs[1].Path)
	require.Equal(t, 1, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, fmt.Sprintf("%s: handover: the log at %s does not start from the handover note in %s, which --key signed: "+
		"its first leaf is the hash of another note", segs[1].Path, path, integrity.HandoverPath(path)))

	require.NoError(t, os.Remove(integrity.HandoverPath(path)))
	res = run(t, "", "verify", "--key", oldPub, "--alone", segs[1].Path)
	require.Equal(t, 1, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "not signed by key cli-test+")
	require.Contains(t, res.stdout, "no handover note beside its log hands it over from --key: give --key of the key that signed it")
}

// --alone follows one handover, from --key to the key its note names: a
// segment two handovers on is refused with the first key, naming the
// key that signed its note, and verifies with that key; a segment of the
// middle log, retired, follows its own note.
func TestVerifyAloneFollowsOneHandover(t *testing.T) {
	path, oldPub, midSegs, lastSegs, midPub := handedOverRotatedTwice(t)
	mid, err := integrity.LoadVerifierKey(midPub)
	require.NoError(t, err)

	res := run(t, "", "verify", "--key", oldPub, "--alone", lastSegs[1].Path)
	require.Equal(t, 1, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, fmt.Sprintf("nor does its log's handover note hand it over from --key (%s: not signed by key cli-test+",
		integrity.HandoverPath(path)))
	require.Contains(t, res.stdout, fmt.Sprintf("(signed by [%s]))", integrity.KeyID(mid.Name(), mid.KeyHash())))

	res = run(t, "", "verify", "--key", midPub, "--alone", lastSegs[1].Path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, path+": handover: the log starts from the handover note in "+integrity.HandoverPath(path))

	res = run(t, "", "verify", "--key", oldPub, "--alone", midSegs[1].Path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	midPath, _ := filesink.ActiveOf(midSegs[1].Path)
	require.Contains(t, res.stdout, midPath+": handover: the log starts from the handover note in ")
	require.Contains(t, res.stdout, midSegs[1].Path+": handover: the log was retired by its final checkpoint at 62 lines; it goes on as \"third/events.jsonl\"")

	// The first key over the whole directory: every segment of the first
	// two logs verifies, and each of the third's is refused.
	res = run(t, "", "verify", "--key", oldPub, "--alone", filepath.Dir(path))
	require.Equal(t, 1, res.code, res.stdout+res.stderr)
	require.Equal(t, len(lastSegs), strings.Count(res.stdout, "nor does its log's handover note hand it over from --key"))
}
