package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/witness"
	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

// handedOver hands the witnessed fixture's log over to a new key, with
// both witnesses cosigning the final checkpoint, then writes and seals
// two lines of the new log at the same path.
func handedOver(t *testing.T) (path, retired, oldPub, newKey string, wkeys []string) {
	t.Helper()
	path, retired, oldPub, newKey, wkeys = handOver(t)
	startNewLog(t, path, newKey)
	return path, retired, oldPub, newKey, wkeys
}

// handOver hands the witnessed fixture's log over to a new key, with both
// witnesses cosigning the final checkpoint.
func handOver(t *testing.T) (path, retired, oldPub, newKey string, wkeys []string) {
	t.Helper()
	path, oldKey, oldPub, wkeys, fakes := witnessedFixture(t)
	newKey, newPub := keyFiles(t, "cli-test-2027")
	res := run(t, "", "log", "handover", "--signing-key", oldKey, "--next-key", newPub,
		"--witness", fakes[0].URL+"="+wkeys[0], "--witness", fakes[1].URL+"="+wkeys[1], path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, `ends at 8 lines; its final checkpoint names the key cli-test-2027+`)
	require.Contains(t, res.stdout, "the new log starts from the note in "+path+".handover")
	return path, retiredOf(t, path), oldPub, newKey, wkeys
}

// retiredOf is the one retired audit file of path.
func retiredOf(t *testing.T, path string) string {
	t.Helper()
	matches, err := filepath.Glob(path + ".retired-*")
	require.NoError(t, err)
	retired := ""
	for _, m := range matches {
		if !strings.Contains(filepath.Base(m), ".jsonl.retired-") || strings.Count(filepath.Base(m), ".") != 2 {
			continue
		}
		require.Empty(t, retired, "one retired file: %v", matches)
		retired = m
	}
	require.NotEmpty(t, retired, "%v", matches)
	_, err = os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "the retired file was moved aside")
	return retired
}

// startNewLog writes two lines at path and seals them with the key.
func startNewLog(t *testing.T, path, keyFile string) {
	t.Helper()
	s, f := op(sessionB, "stop", "b000000000000009", 3, 4)
	appendFlocked(t, path, canonLines(s, f))
	require.NoError(t, sealWith(t, path, keyFile))
}

func sealWith(t *testing.T, path, keyFile string) error {
	t.Helper()
	return sealFileOnce(t, path, keyFile, (*integrity.Sealer).Seal)
}

// sealFileOnce seals path with a sealer of the key at keyFile, by seal (Seal,
// or SealAtStart as the collector's start does), and closes it.
func sealFileOnce(t *testing.T, path, keyFile string, seal func(*integrity.Sealer, context.Context, string) error) error {
	t.Helper()
	keys, err := integrity.LoadSigningKey(keyFile)
	require.NoError(t, err)
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: 1e9})
	require.NoError(t, err)
	defer func() { require.NoError(t, sealer.Close(context.Background())) }()
	return seal(sealer, context.Background(), path)
}

// verify, given only the first key, follows the handover to the new log.
func TestVerifyFollowsAHandover(t *testing.T) {
	path, retired, oldPub, _, wkeys := handedOver(t)
	res := run(t, "", "verify", "--key", oldPub, "--allow-open", retired, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, `handover: final at 8 lines; the log goes on as "cli-test-2027/audit.jsonl", signed by cli-test-2027+`)
	require.Contains(t, res.stdout, path+": integrity: trail segments=0 retired=0 first_line=1 lines=2 sealed=2 unsealed=0")
	require.Contains(t, res.stdout, path+": handover: the log starts from the handover of "+retired)

	// The witnesses cosigned the final checkpoint too.
	res = run(t, "", "verify", "--key", oldPub, "--witness", wkeys[0], "--witness", wkeys[1], "--allow-open", retired)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "witness: lines=8 witnessed=8 unwitnessed=0 records=3 quorum=2/2")
}

func TestVerifyRefusesARetiredLogThatGrew(t *testing.T) {
	t.Run("line appended to the retired file", func(t *testing.T) {
		path, retired, oldPub, _, wkeys := handedOver(t)
		s, f := op(sessionA, "stop", "a000000000000009", 7, 8)
		appendFlocked(t, retired, canonLines(s, f))
		res := run(t, "", "verify", "--key", oldPub, "--allow-open", "--allow-unsealed", "10", retired, path)
		require.Equal(t, 1, res.code, res.stdout)
		require.Contains(t, res.stdout, retired+":9: handover: the log was retired at 8 lines by its final checkpoint, but the file has 10")

		// The witnesses cosigned the final checkpoint: the lines past it
		// are not said to be a handover without them.
		res = run(t, "", "verify", "--key", oldPub, "--witness", wkeys[0], "--witness", wkeys[1], "--allow-open", "--allow-unsealed", "10", retired, path)
		require.Equal(t, 1, res.code, res.stdout)
		require.Contains(t, res.stdout, retired+": witness: 2 lines after the newest checkpoint the witnesses cosigned (line 8); "+
			"they were added after the handover, past its final checkpoint, which these witnesses cosigned")
		require.NotContains(t, res.stdout, "--without-witnesses")
	})
	t.Run("retired key seals on", func(t *testing.T) {
		path, retired, oldPub, _, _ := handedOver(t)
		s, f := op(sessionA, "stop", "a000000000000009", 7, 8)
		appendFlocked(t, retired, canonLines(s, f))
		oldKey := strings.TrimSuffix(oldPub, ".pub") + ".key"
		keys, err := integrity.LoadSigningKey(oldKey)
		require.NoError(t, err)
		// The collector refuses a retired log; the key holder signs on by hand.
		_, c, err := integrity.NewestSigned(retired, keys.Verifier)
		require.NoError(t, err)
		c.N++
		next, err := integrity.SignCheckpoint(c, keys.Signer)
		require.NoError(t, err)
		require.NoError(t, integrity.AppendHandover(retired, next))
		res := run(t, "", "verify", "--key", oldPub, "--allow-open", retired, path)
		require.Equal(t, 1, res.code, res.stdout)
		require.Contains(t, res.stdout, "1 checkpoint was signed after the final one: the retired log went on")
	})
	t.Run("retired key starts the path again", func(t *testing.T) {
		path, retired, oldPub, _, _ := handedOver(t)
		other := filepath.Join(filepath.Dir(path), "again", "audit.jsonl")
		require.NoError(t, os.MkdirAll(filepath.Dir(other), 0o700))
		s, f := op(sessionA, "stop", "a000000000000009", 7, 8)
		appendFlocked(t, other, canonLines(s, f))
		keys, err := integrity.LoadSigningKey(strings.TrimSuffix(oldPub, ".pub") + ".key")
		require.NoError(t, err)
		sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: 1e9})
		require.NoError(t, err)
		require.NoError(t, sealer.Seal(context.Background(), other))
		res := run(t, "", "verify", "--key", oldPub, "--allow-open", retired, other)
		require.Equal(t, 1, res.code, res.stdout)
		require.Contains(t, res.stdout, `goes on with the log "cli-test/audit.jsonl", which `+retired+" retired")
	})
}

func TestLogHandoverUsage(t *testing.T) {
	path, keyPath, _ := sealedFixture(t)
	res := run(t, "", "log", "handover", "--signing-key", keyPath, path)
	require.Equal(t, 2, res.code)
	res = run(t, "", "log", "handover", "--signing-key", keyPath, "--next-key", strings.TrimSuffix(keyPath, ".key")+".pub", path)
	require.Equal(t, 2, res.code)
	require.Contains(t, res.stderr, "--next-key: is the key being retired")

	// The retiring key given as a witness's: it would cosign its own note.
	dir := t.TempDir()
	res = run(t, "", "keygen", "--name", "next", "--out", dir)
	require.Equal(t, 0, res.code, res.stderr)
	pub := strings.TrimSuffix(keyPath, ".key") + ".pub"
	res = run(t, "", "log", "handover", "--signing-key", keyPath, "--next-key", filepath.Join(dir, "next.pub"),
		"--witness", "http://127.0.0.1:1="+pub, path)
	require.Equal(t, 2, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stderr, "holds the log's own key (--signing-key)")
}

// A retired log put back where the collector writes is not sealed on.
func TestSealerRefusesARetiredLog(t *testing.T) {
	_, retired, oldPub, _, _ := handedOver(t)
	keys, err := integrity.LoadSigningKey(strings.TrimSuffix(oldPub, ".pub") + ".key")
	require.NoError(t, err)
	s, f := op(sessionA, "stop", "a000000000000009", 7, 8)
	appendFlocked(t, retired, canonLines(s, f))
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: 1e9})
	require.NoError(t, err)
	err = sealer.Seal(context.Background(), retired)
	require.ErrorIs(t, err, integrity.ErrRetired)
	require.ErrorContains(t, err, `final checkpoint at 8 lines; the log goes on as "cli-test-2027/audit.jsonl"`)
}

// handOverRotated hands a rotated, compressed trail over to a new key and
// starts the new log at the path. It returns the path, the retired file
// (inside the retired log's directory), the first public key and the new
// signing key.
func handOverRotated(t *testing.T) (path, retired, oldPub, newKey string) {
	t.Helper()
	path, retired, oldPub, newKey = handOverRotatedLog(t)
	st, fin := op(sessionB, "stop", "b000000000000999", 121, 122) // the session goes on
	appendFlocked(t, path, canonLines(st, fin))
	require.NoError(t, sealWith(t, path, newKey))
	return path, retired, oldPub, newKey
}

// handOverRotatedLog is handOverRotated without starting the new log:
// nothing is left at the path but the handover's note.
func handOverRotatedLog(t *testing.T) (path, retired, oldPub, newKey string) {
	t.Helper()
	path, keyPath, oldPub, _ := rotatedFixture(t, 60)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	newKey, nextPub := keyFiles(t, "next")
	res := run(t, "", "log", "handover", "--signing-key", keyPath, "--next-key", nextPub, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, `the log "cli-test/events.jsonl" ends at 240 lines`, "the final checkpoint covers every segment")
	matches, err := filepath.Glob(path + ".retired-*Z")
	require.NoError(t, err)
	require.Len(t, matches, 1)
	retired = filepath.Join(matches[0], "events.jsonl")
	require.Contains(t, res.stdout, "retired file: "+retired+" (with its sidecars and closed segments, in "+matches[0]+")")
	moved, err := filesink.Segments(retired)
	require.NoError(t, err)
	require.Len(t, moved, len(segs), "the segments moved with the log, under their names")
	left, err := filesink.Segments(path)
	require.NoError(t, err)
	require.Empty(t, left)
	for _, suffix := range []string{"", ".tlog", ".checkpoints", ".segments"} {
		_, err := os.Stat(path + suffix)
		require.ErrorIs(t, err, os.ErrNotExist, suffix)
	}
	return path, retired, oldPub, newKey
}

// A second handover before the new log started says what happened.
func TestLogHandoverTwice(t *testing.T) {
	path, _, _, _ := handOverRotated(t)
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Remove(integrity.StorePath(path)))
	require.NoError(t, os.Remove(integrity.CheckpointsPath(path)))
	require.NoError(t, os.Remove(integrity.SegmentsPath(path)))
	keys := t.TempDir()
	for _, name := range []string{"again", "later"} {
		res := run(t, "", "keygen", "--name", name, "--out", keys)
		require.Equal(t, 0, res.code, res.stderr)
	}
	res := run(t, "", "log", "handover", "--signing-key", filepath.Join(keys, "again.key"), "--next-key", filepath.Join(keys, "later.pub"), path)
	require.NotEqual(t, 0, res.code)
	require.Contains(t, res.stderr, path+": nothing to hand over: its log was handed over already, and the note in "+path+".handover starts the next one")
}

// A handover killed after its final checkpoint was signed, or midway
// through the moves, is finished by running it again; with another next
// key it is refused.
func TestLogHandoverResumes(t *testing.T) {
	path, keyPath, oldPub, _ := rotatedFixture(t, 60)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	dir := t.TempDir()
	for _, name := range []string{"next", "other"} {
		res := run(t, "", "keygen", "--name", name, "--out", dir)
		require.Equal(t, 0, res.code, res.stderr)
	}
	nextPub, err := os.ReadFile(filepath.Join(dir, "next.pub"))
	require.NoError(t, err)
	keys, err := integrity.LoadSigningKey(keyPath)
	require.NoError(t, err)
	// As a run killed after the final checkpoint and the first move.
	_, last, err := integrity.NewestSigned(path, keys.Verifier)
	require.NoError(t, err)
	signed, err := integrity.SignHandover(integrity.Handover{Checkpoint: last, NextKey: strings.TrimSpace(string(nextPub)), NextOrigin: "next/events.jsonl"}, keys.Signer)
	require.NoError(t, err)
	require.NoError(t, integrity.AppendHandover(path, signed))
	begun := path + ".retired-20270101T000000Z"
	require.NoError(t, os.Mkdir(begun, 0o700))
	require.NoError(t, os.Rename(segs[0].Path, filepath.Join(begun, filepath.Base(segs[0].Path))))

	res := run(t, "", "log", "handover", "--signing-key", keyPath, "--next-key", filepath.Join(dir, "other.pub"), path)
	require.NotEqual(t, 0, res.code)
	require.Contains(t, res.stderr, "the log was handed over already, to the key next+")

	res = run(t, "", "log", "handover", "--signing-key", keyPath, "--next-key", filepath.Join(dir, "next.pub"), path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "retired file: "+filepath.Join(begun, "events.jsonl"))
	moved, err := filesink.Segments(filepath.Join(begun, "events.jsonl"))
	require.NoError(t, err)
	require.Len(t, moved, len(segs), "every segment in the retired directory the killed run began")
	note, err := os.ReadFile(integrity.HandoverPath(path))
	require.NoError(t, err)
	require.Equal(t, signed, note)
	res = run(t, "", "verify", "--key", oldPub, filepath.Dir(path))
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "lines=240 sealed=240 unsealed=0")
}

// A rotated log is handed over whole: verify with the first key follows
// the handover across the retired log's segments into the new log, in a
// directory, or with the files named in any order.
func TestLogHandoverOfARotatedTrail(t *testing.T) {
	path, retired, oldPub, _ := handOverRotated(t)
	for _, args := range [][]string{
		{filepath.Dir(path)},
		{path, filepath.Dir(retired)},
		{path, retired},
	} {
		res := run(t, "", append([]string{"verify", "--key", oldPub, "--allow-open"}, args...)...)
		require.Equal(t, 0, res.code, "%v\n%s", args, res.stdout+res.stderr)
		require.Contains(t, res.stdout, retired+": integrity: trail segments=")
		require.Contains(t, res.stdout, "lines=240 sealed=240 unsealed=0")
		require.Contains(t, res.stdout, retired+`: handover: final at 240 lines; the log goes on as "next/events.jsonl"`)
		require.Contains(t, res.stdout, path+": handover: the log starts from the handover of "+retired)
		require.Less(t, strings.Index(res.stdout, retired+": handover: final"), strings.Index(res.stdout, path+": integrity:"),
			"the retired log is read first")
	}
}

// A line added to any part of a retired rotated log after its handover
// is refused.
func TestVerifyRefusesARetiredRotatedLogThatGrew(t *testing.T) {
	s, f := op(sessionA, "stop", "a000000000000999", 997, 998)
	line := canonLines(s, f)
	t.Run("compressed segment", func(t *testing.T) {
		path, retired, oldPub, _ := handOverRotated(t)
		segs, err := filesink.Segments(retired)
		require.NoError(t, err)
		seg := segs[1].Path
		compressTo(t, seg, append(decompress(t, seg), line...))
		res := run(t, "", "verify", "--key", oldPub, "--allow-open", "--allow-unsealed", "10", filepath.Dir(path))
		require.Equal(t, 1, res.code, res.stdout)
		require.Contains(t, res.stdout, seg+": holds")
		require.Contains(t, res.stdout, "lines were appended, removed, or the segment was swapped")
	})
	t.Run("active file", func(t *testing.T) {
		path, retired, oldPub, _ := handOverRotated(t)
		appendFlocked(t, retired, line)
		res := run(t, "", "verify", "--key", oldPub, "--allow-open", "--allow-unsealed", "10", filepath.Dir(path))
		require.Equal(t, 1, res.code, res.stdout)
		require.Contains(t, res.stdout, "handover: the log was retired at 240 lines by its final checkpoint, but the file has 242")
	})
	t.Run("new segment", func(t *testing.T) {
		path, retired, oldPub, _ := handOverRotated(t)
		segs, err := filesink.Segments(retired)
		require.NoError(t, err)
		last := segs[len(segs)-1]
		extra := filepath.Join(filepath.Dir(retired), fmt.Sprintf("events-%s-%06d.jsonl", last.Time.Format("20060102T150405Z"), last.Seq+1))
		require.NoError(t, os.WriteFile(extra, []byte(line), 0o600))
		res := run(t, "", "verify", "--key", oldPub, "--allow-open", "--allow-unsealed", "10", filepath.Dir(path))
		require.Equal(t, 1, res.code, res.stdout)
		require.Contains(t, res.stdout, "handover: the log was retired at 240 lines by its final checkpoint, but the file has 242")
	})
}

// verify finds the chain's order from the handover notes, not from the
// order the files are named in.
func TestVerifyOrdersAHandoverItself(t *testing.T) {
	path, retired, oldPub, _, _ := handedOver(t)
	res := run(t, "", "verify", "--key", oldPub, "--allow-open", path, retired)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, path+": handover: the log starts from the handover of "+retired)
}

// The new log's leaf 0 is the record hash of the signed final checkpoint,
// and its first checkpoint covers it.
func TestNewLogStartsFromTheHandoverNote(t *testing.T) {
	path, retired, _, newKey, _ := handedOver(t)
	noteBytes, err := os.ReadFile(path + ".handover")
	require.NoError(t, err)
	require.Contains(t, string(noteBytes), "\nfinal\nnext-key cli-test-2027+")
	// The note is the final record of the retired log's checkpoints.
	cps, err := os.ReadFile(retired + ".checkpoints")
	require.NoError(t, err)
	require.Contains(t, string(cps), string(noteBytes))

	keys, err := integrity.LoadSigningKey(newKey)
	require.NoError(t, err)
	sl, err := integrity.LoadSegmentLog(path, keys.Verifier)
	require.NoError(t, err)
	g := sl.Genesis()
	require.NotNil(t, g)
	leaf := sha256.Sum256(append([]byte{0}, noteBytes...)) // RFC 6962 leaf hash
	require.Equal(t, leaf[:], g.EndRange[0][:])
	require.Equal(t, "cli-test-2027/audit.jsonl", g.Origin)

	// The store's leaf 0 is that hash, and the checkpoint covers it and
	// the two lines.
	store, err := os.ReadFile(path + ".tlog")
	require.NoError(t, err)
	require.Equal(t, leaf[:], store[:32])
	_, c, err := integrity.NewestSigned(path, keys.Verifier)
	require.NoError(t, err)
	require.Equal(t, int64(3), c.N)
}

func TestVerifyRefusesANewLogNotFromTheHandover(t *testing.T) {
	t.Run("started without the note", func(t *testing.T) {
		path, retired, oldPub, newKey, _ := handOver(t)
		require.NoError(t, os.Remove(path+".handover"))
		startNewLog(t, path, newKey)
		res := run(t, "", "verify", "--key", oldPub, "--allow-open", retired, path)
		require.Equal(t, 1, res.code, res.stdout)
		require.Contains(t, res.stdout, "the log at "+path+" does not start from the handover of "+retired+
			": its first leaf is its first line, not the handover note")
	})
	t.Run("started from another note", func(t *testing.T) {
		path, retired, oldPub, newKey, _ := handOver(t)
		oldKeys, err := integrity.LoadSigningKey(strings.TrimSuffix(oldPub, ".pub") + ".key")
		require.NoError(t, err)
		// The old key holder signs a second handover of a shorter tree.
		st, err := integrity.ReadHandover(retired, oldKeys.Verifier)
		require.NoError(t, err)
		other := *st.Final
		other.N--
		signed, err := integrity.SignHandover(other, oldKeys.Signer)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path+".handover", signed, 0o600))
		startNewLog(t, path, newKey)
		res := run(t, "", "verify", "--key", oldPub, "--allow-open", retired, path)
		require.Equal(t, 1, res.code, res.stdout)
		require.Contains(t, res.stdout, "the log at "+path+" does not start from the handover of "+retired+
			": its first leaf is the hash of another note")
	})
	t.Run("segments sidecar removed", func(t *testing.T) {
		path, retired, oldPub, _, _ := handedOver(t)
		require.NoError(t, os.Remove(path+".segments"))
		res := run(t, "", "verify", "--key", oldPub, "--allow-open", retired, path)
		require.Equal(t, 1, res.code, res.stdout)
		require.Contains(t, res.stdout, "does not start from the handover of "+retired)
		require.Contains(t, res.stdout, "the file no longer matches checkpoint #1 (3 lines, the file has 2)")
	})
}

// A note handing the log over to another key is not picked up: the
// collector with this key does not seal the path.
func TestSealerRefusesANoteForAnotherKey(t *testing.T) {
	path, _, _, _, _ := handOver(t)
	nextKey, _ := keyFiles(t, "someone-else")
	s, f := op(sessionB, "stop", "b000000000000009", 3, 4)
	appendFlocked(t, path, canonLines(s, f))
	err := sealWith(t, path, nextKey)
	require.ErrorContains(t, err, "audit.jsonl.handover hands the log over to the key cli-test-2027+")
	_, err = os.Stat(path + ".checkpoints")
	require.True(t, err != nil || fileSize(t, path+".checkpoints") == 0, "nothing signed")
}

func fileSize(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	require.NoError(t, err)
	return fi.Size()
}

// Two handovers in a row: verify with the first key follows both, and
// the middle log's final checkpoint counts its lines without its leaf 0.
func TestVerifyFollowsTwoHandovers(t *testing.T) {
	path, retired1, oldPub, midKey, _ := handedOver(t)
	nextKey, nextPub := keyFiles(t, "cli-test-2028")
	res := run(t, "", "log", "handover", "--signing-key", midKey, "--next-key", nextPub, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, `the log "cli-test-2027/audit.jsonl" ends at 2 lines`)
	matches, err := filepath.Glob(path + ".retired-*.handover")
	require.NoError(t, err)
	require.Len(t, matches, 1, "the middle log's note moved aside with it")
	retired2 := strings.TrimSuffix(matches[0], ".handover")
	require.NotEqual(t, retired1, retired2)
	s, f := op(sessionA, "stop", "a000000000000009", 7, 8)
	appendFlocked(t, path, canonLines(s, f))
	require.NoError(t, sealWith(t, path, nextKey))

	res = run(t, "", "verify", "--key", oldPub, "--allow-open", retired1, retired2, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, retired2+`: handover: final at 2 lines; the log goes on as "cli-test-2028/audit.jsonl"`)
	require.Contains(t, res.stdout, path+": handover: the log starts from the handover of "+retired2)

	// A line added to the middle log after its handover.
	s, f = op(sessionB, "stop", "b00000000000000a", 5, 6)
	appendFlocked(t, retired2, canonLines(s, f))
	res = run(t, "", "verify", "--key", oldPub, "--allow-open", "--allow-unsealed", "10", retired1, retired2, path)
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stdout, retired2+":3: handover: the log was retired at 2 lines by its final checkpoint, but the file has 4")
}

// Witnesses cosign the new log's checkpoints, its handover leaf included,
// and verify with the first key follows into the witnessed new log.
func TestHandedOverLogIsWitnessed(t *testing.T) {
	path, retired, oldPub, newKey, wkey := witnessedNewLog(t)
	res := run(t, "", "verify", "--key", strings.TrimSuffix(newKey, ".key")+".pub", "--witness", wkey, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "witness: lines=2 witnessed=2 unwitnessed=0")

	// A line of the new log rewritten and re-sealed by the new key's
	// holder: the key check passes, the witness check refuses it.
	lines := fileLines(t, path)
	lines[0] = strings.Replace(lines[0], `"op":"stop"`, `"op":"exec"`, 1)
	lines[1] = strings.Replace(lines[1], `"op":"stop"`, `"op":"exec"`, 1)
	writeLines(t, path, lines)
	require.NoError(t, os.Remove(path+".tlog"))
	require.NoError(t, os.Remove(path+".checkpoints"))
	require.NoError(t, sealWith(t, path, newKey))
	res = run(t, "", "verify", "--key", oldPub, retired, path)
	require.Equal(t, 0, res.code, res.stdout)
	res = run(t, "", "verify", "--key", strings.TrimSuffix(newKey, ".key")+".pub", "--witness", wkey, path)
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stdout, "lines were changed, and re-signed, after the witnesses saw them")
}

// In a log that starts from a handover, line N is leaf N: the witness
// check names lines as the file holds them, not counting the note's leaf.
func TestHandedOverWitnessProblemsNameLines(t *testing.T) {
	path, _, _, newKey, wkey := witnessedNewLog(t)
	lines := fileLines(t, path)
	writeLines(t, path, lines[:1])
	res := run(t, "", "verify", "--key", strings.TrimSuffix(newKey, ".key")+".pub", "--witness", wkey, "--allow-open", path)
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stdout, "cosigned, covers 2 lines, but the file has only 1: cut back")
	require.Contains(t, res.stdout, "checkpoint #2 covers 2 lines of the log but the trail has 1")
}

// witnessedNewLog hands the witnessed fixture's log over to a new key and
// writes two lines of the new log, each sealed and cosigned by a witness
// of the new log. It returns the witness's key file last.
func witnessedNewLog(t *testing.T) (path, retired, oldPub, newKey, wkey string) {
	t.Helper()
	path, retired, oldPub, newKey, _ = handOver(t)
	keys, err := integrity.LoadSigningKey(newKey)
	require.NoError(t, err)
	f := witnesstest.Start(t, "w3.example/w", keys.Verifier)
	w, err := witness.NewWitness(f.URL, f.VKey, nil, nil)
	require.NoError(t, err)
	pool, err := witness.NewPool([]*witness.Witness{w}, 1, nil, nil)
	require.NoError(t, err)
	wkey = filepath.Join(t.TempDir(), "w3.vkey")
	require.NoError(t, os.WriteFile(wkey, []byte(f.VKey+"\n"), 0o644))
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: 1e9, Witnesses: pool})
	require.NoError(t, err)
	s, fin := op(sessionB, "stop", "b000000000000009", 3, 4)
	appendFlocked(t, path, canonLines(s))
	require.NoError(t, sealer.Seal(context.Background(), path))
	appendFlocked(t, path, canonLines(fin))
	require.NoError(t, sealer.Seal(context.Background(), path))
	require.NoError(t, sealer.Close(context.Background()))
	return path, retired, oldPub, newKey, wkey
}

// log reset ties the new log to nothing: a pending note is moved aside
// with the sidecars, and verify with the first key refuses the link.
func TestLogResetDropsAPendingHandover(t *testing.T) {
	path, retired, oldPub, newKey, _ := handOver(t)
	s, f := op(sessionB, "stop", "b000000000000009", 3, 4)
	appendFlocked(t, path, canonLines(s, f))
	res := run(t, "", "log", "reset", "--signing-key", newKey, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "kept the old audit.jsonl.handover as ")
	_, err := os.Stat(path + ".handover")
	require.ErrorIs(t, err, os.ErrNotExist)
	res = run(t, "", "verify", "--key", oldPub, "--allow-open", retired, path)
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stdout, "does not start from the handover of "+retired+": its first leaf is its first line")
}

// A segment of a handed-over log, in its retired directory, verifies
// alone with the retiring key: verify names the final checkpoint its lines
// are in and the log the history goes on with. A line added to the
// segment after the handover is refused.
func TestVerifyAloneInARetiredDirectory(t *testing.T) {
	path, retired, oldPub, newKey := handOverRotated(t)
	segs, err := filesink.Segments(retired)
	require.NoError(t, err)
	// The owner lock belongs to the path, not to the log retired.
	_, err = os.Lstat(integrity.OwnerLockPath(path))
	require.NoError(t, err)
	_, err = os.Lstat(integrity.OwnerLockPath(retired))
	require.ErrorIs(t, err, os.ErrNotExist)
	v, err := integrity.LoadVerifierKey(oldPub)
	require.NoError(t, err)
	sl, err := integrity.LoadSegmentLog(retired, v)
	require.NoError(t, err)
	next, err := integrity.LoadSigningKey(newKey)
	require.NoError(t, err)
	rec := sl.Segments[1]
	require.Equal(t, filepath.Base(segs[1].Plain), rec.Name)

	res := run(t, "", "verify", "--key", oldPub, "--alone", segs[1].Path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, fmt.Sprintf("%s: integrity: lines %d-%d of the log are in checkpoint #", segs[1].Path, rec.First+1, rec.End()))
	require.Contains(t, res.stdout, fmt.Sprintf("%s: handover: the log was retired by its final checkpoint at 240 lines; "+
		"it goes on as %q, signed by %s+%08x; the segment's lines are in that final checkpoint",
		segs[1].Path, "next/events.jsonl", next.Signer.Name(), next.Signer.KeyHash()))
	require.Contains(t, res.stdout, fmt.Sprintf("%s: integrity: alone first_line=%d lines=%d newest=240", segs[1].Path, rec.First+1, rec.Count))

	// The retired directory given: each of its segments, alone.
	res = run(t, "", "verify", "--key", oldPub, "--alone", filepath.Dir(retired))
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Equal(t, len(segs), strings.Count(res.stdout, ": handover: the log was retired by its final checkpoint at 240 lines"))

	s, f := op(sessionA, "stop", "a000000000000999", 997, 998)
	compressTo(t, segs[1].Path, append(decompress(t, segs[1].Path), canonLines(s, f)...))
	res = run(t, "", "verify", "--key", oldPub, "--alone", segs[1].Path)
	require.Equal(t, 1, res.code, res.stdout)
}

// --witness takes URL=W.vkey with the key after the last "=", so a
// submission URL may carry a query; a value it refuses is never quoted,
// since the URL may hold a token or a password.
func TestLogHandoverWitnessValueNotQuoted(t *testing.T) {
	path, keyPath, _ := sealedFixture(t)
	dir := t.TempDir()
	_, next := keyFiles(t, "cli-next")
	for _, w := range []string{
		"http://127.0.0.1:1/?token=hunter2=" + filepath.Join(dir, "missing.vkey"),
		"https://user:hunter2@127.0.0.1:1/w",
		"https://user:hunter2=@127.0.0.1:1/w", // a padded token as the password
		"hunter2@127.0.0.1/w=" + filepath.Join(dir, "missing.vkey"),
	} {
		res := run(t, "", "log", "handover", "--signing-key", keyPath, "--next-key", next, "--witness", w, path)
		require.Equal(t, 2, res.code, "%q: %s", w, res.stderr)
		require.NotContains(t, res.stderr, "hunter2", "%q", w)
	}
	res := run(t, "", "log", "handover", "--signing-key", keyPath, "--next-key", next,
		"--witness", "http://127.0.0.1:1/?token=hunter2="+filepath.Join(dir, "missing.vkey"), path)
	require.Contains(t, res.stderr, "missing.vkey", "the key file is the part after the last =")
}

// A handover the witnesses did not all cosign says which witness failed
// and why, by the reason the collector's metric uses.
func TestLogHandoverSaysWhyAWitnessDidNotCosign(t *testing.T) {
	path, oldKey, _, wkeys, fakes := witnessedFixture(t)
	_, nextPub := keyFiles(t, "cli-next")
	fakes[1].SetStatus(403)
	res := run(t, "", "log", "handover", "--signing-key", oldKey, "--next-key", nextPub,
		"--witness", "http://127.0.0.1:1/?token=hunter2="+wkeys[0], "--witness", fakes[1].URL+"="+wkeys[1], path)
	require.Equal(t, 1, res.code, res.stderr)
	require.Contains(t, res.stderr, "w1.example/w: unreachable")
	require.Contains(t, res.stderr, "w2.example/w: bad_signature")
	require.NotContains(t, res.stderr, "hunter2")
}

// A witness whose clock is ahead answers a cosignature dated past the
// bound: the handover names it by its metric reason, and says to check
// the clocks.
func TestLogHandoverSaysAWitnessClockMayBeAhead(t *testing.T) {
	path, oldKey, _, wkeys, fakes := witnessedFixture(t)
	_, nextPub := keyFiles(t, "cli-next")
	fakes[1].SetClockSkew(time.Hour)
	res := run(t, "", "log", "handover", "--signing-key", oldKey, "--next-key", nextPub,
		"--witness", fakes[0].URL+"="+wkeys[0], "--witness", fakes[1].URL+"="+wkeys[1], path)
	require.Equal(t, 1, res.code, res.stderr)
	require.Contains(t, res.stderr, "w2.example/w: dated_ahead (its cosignature is dated more than "+
		"10m0s after this host's clock: check the witness's clock, and this host's)")
	require.NotContains(t, res.stderr, "w1.example/w")
}

// --alone over a directory that holds a log of another key (the log a
// handover retired, checked with the new key) names each of its segments
// as a problem and goes on, as for a segment no record names.
func TestVerifyAloneGoesOnPastAnotherKeysSegments(t *testing.T) {
	path, retired, _, newKey := handOverRotated(t)
	segs, err := filesink.Segments(retired)
	require.NoError(t, err)
	require.Greater(t, len(segs), 1)
	newPub := strings.TrimSuffix(newKey, ".key") + ".pub"
	res := run(t, "", "verify", "--key", newPub, "--alone", filepath.Dir(path))
	require.Equal(t, 1, res.code, res.stdout+res.stderr)
	require.Empty(t, res.stderr)
	for _, s := range segs {
		require.Contains(t, res.stdout, s.Path+": integrity: "+integrity.SegmentsPath(retired)+": segment record #1: not signed by key next+")
	}
	require.Contains(t, res.stdout, "no handover note beside its log hands it over from --key: give --key of the key that signed it, "+
		"or verify the trail, its retired logs included, without --alone, to follow every key handover")
}

// A new key made with the retiring key's name gets, by default, the
// retiring log's origin; so does --next-origin naming it. A witness holds
// one key and one tree per origin, and verify reads a second log of a
// retired origin as the old key going on: the handover is refused before
// its final checkpoint is signed, and the path keeps its log.
func TestLogHandoverRefusesTheRetiringOrigin(t *testing.T) {
	path, keyPath, pubPath := sealedFixture(t)
	_, samePub := keyFiles(t, "cli-test")
	_, otherPub := keyFiles(t, "cli-test-2027")
	for _, args := range [][]string{
		{"--next-key", samePub},
		{"--next-key", otherPub, "--next-origin", "cli-test/audit.jsonl"},
	} {
		res := run(t, "", append(append([]string{"log", "handover", "--signing-key", keyPath}, args...), path)...)
		require.Equal(t, 1, res.code, res.stdout+res.stderr)
		require.Contains(t, res.stderr, `--next-origin: "cli-test/audit.jsonl" is the origin of the log being retired`)
		require.FileExists(t, path)
		require.NoFileExists(t, integrity.HandoverPath(path))
		res = run(t, "", "verify", "--key", pubPath, path)
		require.Equal(t, 0, res.code, "no final checkpoint was signed: %s", res.stdout)
	}
}

// Nor may a chain go back to the origin of the log the retiring one was
// handed over from.
func TestLogHandoverRefusesThePreviousOrigin(t *testing.T) {
	path, _, _, midKey, _ := handedOver(t)
	_, nextPub := keyFiles(t, "cli-test-2028")
	res := run(t, "", "log", "handover", "--signing-key", midKey, "--next-key", nextPub,
		"--next-origin", "cli-test/audit.jsonl", path)
	require.Equal(t, 1, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stderr, `--next-origin: "cli-test/audit.jsonl" is the origin of the log it was handed over from`)
	require.FileExists(t, path)
}

// Nor to that of an earlier log of the chain, retired beside the path: a
// new key named as the first one was, two handovers on, would give it by
// default.
func TestLogHandoverRefusesAnEarlierOrigin(t *testing.T) {
	path, retired1, _, midKey, _ := handedOver(t)
	nextKey, nextPub := keyFiles(t, "cli-test-2028")
	res := run(t, "", "log", "handover", "--signing-key", midKey, "--next-key", nextPub, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	startNewLog(t, path, nextKey)
	_, againPub := keyFiles(t, "cli-test")
	res = run(t, "", "log", "handover", "--signing-key", nextKey, "--next-key", againPub, path)
	require.Equal(t, 1, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stderr, `--next-origin: "cli-test/audit.jsonl" is the origin of the log retired to `+retired1)
	require.FileExists(t, path)
}

// The handover note copied beside another path starts a second log from
// the same handover, signed by the new key: a fork of the chain, which
// verify refuses whichever of the two it reads second.
func TestVerifyRefusesTwoLogsFromOneHandover(t *testing.T) {
	path, retired, oldPub, newKey, _ := handedOver(t)
	other := filepath.Join(t.TempDir(), filepath.Base(path))
	note, err := os.ReadFile(integrity.HandoverPath(path))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(integrity.HandoverPath(other), note, 0o600))
	startNewLog(t, other, newKey)
	for _, args := range [][]string{{retired, path, other}, {other, path, retired}} {
		res := run(t, "", append([]string{"verify", "--key", oldPub, "--allow-open", "--allow-duplicates"}, args...)...)
		require.Equal(t, 1, res.code, res.stdout)
		second, first := other, path
		if args[0] == other {
			second, first = path, other
		}
		require.Contains(t, res.stdout, second+": handover: a second log starts from the handover of "+retired+" (the first is "+first+")")
	}
}

// A collector started with the retired key after the handover refuses the
// note, leaving empty sidecars at the path; running the handover again
// still says it was done, not that the note names another key.
func TestLogHandoverAgainAfterARefusedStart(t *testing.T) {
	path, _, oldPub, _, _ := handOver(t)
	oldKey := strings.TrimSuffix(oldPub, ".pub") + ".key"
	require.ErrorContains(t, sealWith(t, path, oldKey), "hands the log over to the key cli-test-2027+")
	require.FileExists(t, integrity.CheckpointsPath(path))
	_, nextPub := keyFiles(t, "cli-test-2027")
	res := run(t, "", "log", "handover", "--signing-key", oldKey, "--next-key", nextPub, path)
	require.Equal(t, 1, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stderr, path+": nothing to hand over: its log was handed over already")
}

// The new log read without the retired one: with the new key it passes,
// and with the first key too (the note beside it, which the first key
// signed, names the new key), and either way verify says that the link to
// the history before it was not checked and how to check it.
func TestVerifyNamesAHandoverNotFollowed(t *testing.T) {
	path, _, oldPub, newKey, _ := handedOver(t)
	const hint = ": handover: the log starts from a handover note that no retired log read names, so its link to " +
		"the history before it is not checked: give the retired log too (or the directory that holds it), with the first key"
	res := run(t, "", "verify", "--key", strings.TrimSuffix(newKey, ".key")+".pub", "--allow-open", path)
	require.Equal(t, 0, res.code, res.stdout)
	require.Contains(t, res.stdout, path+hint)
	res = run(t, "", "verify", "--key", oldPub, "--allow-open", path)
	require.Equal(t, 0, res.code, res.stdout)
	require.Contains(t, res.stdout, path+": handover: signed by cli-test-2027+")
	require.Contains(t, res.stdout, "the next key of the handover note in "+path+".handover, which cli-test+")
	require.Contains(t, res.stdout, path+hint)

	// A note the first key did not sign names the key to no one.
	require.NoError(t, os.Remove(path+".handover"))
	res = run(t, "", "verify", "--key", oldPub, "--allow-open", path)
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stdout, path+hint)
	require.Contains(t, res.stdout, "not signed by key cli-test+")
}

// The retired key starting the path again, after the new log was removed:
// the file sorts before the retired one in its directory, and verify
// still reads it as the retired log going on, in whatever order.
func TestVerifyRefusesTheRetiredOriginReadFirst(t *testing.T) {
	path, retired, oldPub, _, _ := handedOver(t)
	for _, suffix := range integrity.LogFileSuffixes() {
		if err := os.Remove(path + suffix); !errors.Is(err, os.ErrNotExist) {
			require.NoError(t, err)
		}
	}
	s, f := op(sessionA, "stop", "a000000000000009", 7, 8)
	appendFlocked(t, path, canonLines(s, f))
	require.NoError(t, sealWith(t, path, strings.TrimSuffix(oldPub, ".pub")+".key"))
	for _, args := range [][]string{{path, retired}, {retired, path}} { // path sorts first in their directory
		res := run(t, "", append([]string{"verify", "--key", oldPub, "--allow-open"}, args...)...)
		require.Equal(t, 1, res.code, "%v: %s", args, res.stdout)
		require.Contains(t, res.stdout, path+`: handover: this file goes on with the log "cli-test/audit.jsonl", which `+retired+" retired")
	}
}

// A file below a templated directory has an origin that holds its
// directories, so that one session's directory swapped for another's is
// caught. Its next log keeps them by default: the retiring origin with the
// new key's name, not the file name alone that every session shares.
func TestLogHandoverKeepsATemplatedOriginsDirectories(t *testing.T) {
	path, retired, oldPub := handedOverSession(t)
	res := run(t, "", "verify", "--key", oldPub, "--allow-open", retired, path)
	require.Equal(t, 0, res.code, res.stdout)
	require.Contains(t, res.stdout, path+": handover: the log starts from the handover of ")

	// The new log moved to another session's directory, with its sidecars.
	moved := filepath.Join(filepath.Dir(filepath.Dir(path)), "sess-2", filepath.Base(path))
	require.NoError(t, os.MkdirAll(filepath.Dir(moved), 0o700))
	for _, suffix := range integrity.LogFileSuffixes() {
		if err := os.Rename(path+suffix, moved+suffix); !errors.Is(err, os.ErrNotExist) {
			require.NoError(t, err)
		}
	}
	res = run(t, "", "verify", "--key", oldPub, "--allow-open", retired, moved)
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stdout, moved+`: integrity: the checkpoints name another file (origin "cli-test-2027/sess-1/audit.jsonl")`)
}

// handedOverSession seals a file below a templated directory, base/sess-1,
// hands it over to a new key with the default next origin, and starts the
// new log. It returns the path, the retired file and the first public key.
func handedOverSession(t *testing.T) (path, retired, oldPub string) {
	t.Helper()
	_, keyPath, oldPub := sealedFixture(t)
	base := t.TempDir()
	path = filepath.Join(base, "sess-1", "audit.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	s, f := op(sessionA, "exec", "a000000000000001", 1, 2)
	appendFlocked(t, path, canonLines(s, f))
	keys, err := integrity.LoadSigningKey(keyPath)
	require.NoError(t, err)
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: 1e9, OriginBase: base})
	require.NoError(t, err)
	require.NoError(t, sealer.Seal(context.Background(), path))
	require.NoError(t, sealer.Close(context.Background()))

	nextKey, nextPub := keyFiles(t, "cli-test-2027")
	res := run(t, "", "log", "handover", "--signing-key", keyPath, "--next-key", nextPub, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, `the log "cli-test/sess-1/audit.jsonl" ends at 2 lines; its final checkpoint names the key cli-test-2027+`)
	require.Contains(t, res.stdout, `and the origin "cli-test-2027/sess-1/audit.jsonl"`)
	retired = retiredOf(t, path)
	startNewLog(t, path, nextKey)
	return path, retired, oldPub
}

// The handover run again on the retired file (named by mistake for the
// path) finds its final checkpoint, which names the same key and origin,
// but it is not a handover that stopped midway: nothing is moved again,
// and no note is written beside it.
func TestLogHandoverRefusesARetiredFile(t *testing.T) {
	path, keyPath, _ := sealedFixture(t)
	_, nextPub := keyFiles(t, "cli-test-2027")
	args := []string{"log", "handover", "--signing-key", keyPath, "--next-key", nextPub}
	res := run(t, "", append(args, path)...)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	retired := retiredOf(t, path)
	res = run(t, "", append(args, retired)...)
	require.Equal(t, 1, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stderr, retired+": a handover retired this log already; it goes on at "+path)
	matches, err := filepath.Glob(retired + ".*")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{retired + ".checkpoints", retired + ".tlog"}, matches)
}

// A witnessed retired file, named by mistake for the path without
// --witness, is refused as retired: asking for its witnesses would send
// the user to give them only to be refused again.
func TestLogHandoverRefusesAWitnessedRetiredFileAsRetired(t *testing.T) {
	path, retired, _, _, _ := handOver(t)
	_, err := os.Stat(integrity.WitnessedPath(retired))
	require.NoError(t, err)
	keyPath := filepath.Join(filepath.Dir(path), "keys", "cli-test.key")
	_, nextPub := keyFiles(t, "cli-test-2028")
	res := run(t, "", "log", "handover", "--signing-key", keyPath, "--next-key", nextPub, retired)
	require.Equal(t, 1, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stderr, retired+": a handover retired this log already; it goes on at "+path)
	require.NotContains(t, res.stderr, "the log is witnessed")
}

// An origin the final checkpoint could not carry is refused before the
// final checkpoint is signed, with the flag named.
func TestLogHandoverRefusesAnUnreadableOrigin(t *testing.T) {
	path, keyPath, _ := sealedFixture(t)
	_, nextPub := keyFiles(t, "cli-test-2027")
	for _, origin := range []string{"a\rb", strings.Repeat("x", 5000)} {
		res := run(t, "", "log", "handover", "--signing-key", keyPath, "--next-key", nextPub,
			"--next-origin", origin, path)
		require.Equal(t, 1, res.code, res.stdout+res.stderr)
		require.Contains(t, res.stderr, "log handover: next origin: ")
		require.Contains(t, res.stderr, "(--next-origin); nothing was handed over")
		require.FileExists(t, path)
		require.NoFileExists(t, integrity.HandoverPath(path))
	}
}

// A new log whose collector was killed before its first checkpoint holds
// its handover record and an empty checkpoints sidecar: it did start, and
// is handed over again like any other.
func TestLogHandoverOfANewLogKilledBeforeItsFirstCheckpoint(t *testing.T) {
	path, _, _, newKey, _ := handedOver(t)
	require.NoError(t, os.Truncate(integrity.CheckpointsPath(path), 0))
	_, nextPub := keyFiles(t, "cli-test-2028")
	res := run(t, "", "log", "handover", "--signing-key", newKey, "--next-key", nextPub, path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, `the log "cli-test-2027/audit.jsonl" ends at 2 lines`)
}

// A witness that takes the request and never answers: the handover gives
// up on it after the witness timeout, as the collector does, and says so.
func TestLogHandoverDoesNotWaitForeverForAWitness(t *testing.T) {
	path, oldKey, _, wkeys, fakes := witnessedFixture(t)
	_, nextPub := keyFiles(t, "cli-next")
	quit := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-quit:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(quit) // before Close, which waits for the handler
	// No deadline on the command's context, as from a script.
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Run(context.Background(), []string{"log", "handover", "--signing-key", oldKey, "--next-key", nextPub,
			"--witness", srv.URL + "=" + wkeys[0], "--witness", fakes[1].URL + "=" + wkeys[1], path},
			Streams{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr})
	}()
	var code int
	select {
	case code = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("log handover waited for the witness past its timeout")
	}
	require.Equal(t, 1, code, stderr.String())
	require.Contains(t, stderr.String(), "w1.example/w: unreachable")
}

// keyFiles makes the signing key name in a directory of its own, and
// returns its key file and verifier key file.
func keyFiles(t *testing.T, name string) (key, pub string) {
	t.Helper()
	dir := t.TempDir()
	res := run(t, "", "keygen", "--name", name, "--out", dir)
	require.Equal(t, 0, res.code, res.stderr)
	return filepath.Join(dir, name+".key"), filepath.Join(dir, name+".pub")
}
