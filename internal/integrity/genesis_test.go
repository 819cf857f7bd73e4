package integrity

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// pendingHandover writes, beside path, a handover note signed by an old
// key that hands the log over to the key "next"; it returns the new keys,
// their public key file and the note.
func pendingHandover(t *testing.T, path string) (*Keys, string, []byte) {
	t.Helper()
	old, _ := testKeys(t, "old")
	next, nextPub := testKeys(t, "next")
	vkey, err := os.ReadFile(nextPub)
	require.NoError(t, err)
	h := Handover{
		Checkpoint: Checkpoint{Origin: "old/audit.jsonl", N: 5, Hash: tlog.Hash{1, 2, 3}},
		NextKey:    strings.TrimSpace(string(vkey)),
		NextOrigin: "next/elsewhere",
	}
	signed, err := SignHandover(h, old.Signer)
	require.NoError(t, err)
	require.NoError(t, WriteHandoverNote(path, signed))
	require.Error(t, WriteHandoverNote(path, signed), "never over an existing note")
	return next, nextPub, signed
}

// rfc6962Leaf is the RFC 6962 leaf hash, written out.
func rfc6962Leaf(b []byte) tlog.Hash { return sha256.Sum256(append([]byte{0}, b...)) }

func TestSealerStartsFromThePendingHandover(t *testing.T) {
	path := auditPath(t)
	keys, pub, signed := pendingHandover(t, path)
	appendLocked(t, path, lines(0, 3))
	require.NoError(t, newSealer(t, keys).Seal(bg, path))

	sl, err := LoadSegmentLog(path, keys.Verifier)
	require.NoError(t, err)
	g := sl.Genesis()
	require.NotNil(t, g)
	require.Equal(t, rfc6962Leaf(signed), g.EndRange[0])
	require.Equal(t, 0, sl.Closed())
	store, err := os.ReadFile(StorePath(path))
	require.NoError(t, err)
	require.Equal(t, g.EndRange[0][:], store[:tlog.HashSize], "leaf 0 of the store")

	_, c, err := NewestSigned(path, keys.Verifier)
	require.NoError(t, err)
	require.Equal(t, "next/elsewhere", c.Origin, "the origin the note names")
	require.Equal(t, int64(5), c.N, "the note and four lines")
	// The root is the tree over the note's leaf and the lines, as the
	// audit file alone does not give it.
	want := []tlog.Hash{rfc6962Leaf(signed)}
	for _, l := range strings.SplitAfter(lines(0, 3), "\n")[:4] {
		want = append(want, rfc6962Leaf([]byte(l)))
	}
	var f Frontier
	for _, h := range want {
		f.Push(h)
	}
	require.Equal(t, f.Root(), c.Hash)

	res := checkTrail(t, path, pub)
	require.Empty(t, res.Failures)
	require.Equal(t, int64(4), res.Lines)
	require.Equal(t, int64(1), res.First)
	require.Equal(t, int64(5), res.Sealed)

	// More lines, in this process and in a new one.
	appendLocked(t, path, lines(4, 5))
	s := newSealer(t, keys)
	require.NoError(t, s.Seal(bg, path))
	appendLocked(t, path, lines(6, 6))
	require.NoError(t, s.Seal(bg, path))
	require.NoError(t, newSealer(t, keys).Seal(bg, path))
	res = checkTrail(t, path, pub)
	require.Empty(t, res.Failures)
	require.Equal(t, int64(8), res.Sealed)
	sl, err = LoadSegmentLog(path, keys.Verifier)
	require.NoError(t, err)
	require.Len(t, sl.Segments, 1, "the handover is recorded once")
}

// A crash after the handover record was written and before the store
// held its leaf: the next seal puts the leaf in.
func TestSealerFinishesAHandoverStartCutShort(t *testing.T) {
	path := auditPath(t)
	keys, pub, _ := pendingHandover(t, path)
	appendLocked(t, path, lines(0, 1))
	require.NoError(t, newSealer(t, keys).Seal(bg, path))
	require.NoError(t, os.Truncate(StorePath(path), 0))
	require.NoError(t, os.Truncate(CheckpointsPath(path), 0))
	require.NoError(t, newSealer(t, keys).Seal(bg, path))
	res := checkTrail(t, path, pub)
	require.Empty(t, res.Failures)
	require.Equal(t, int64(3), res.Sealed)
}

// A collector started with another key than the one the note names (the
// retired key, the configuration not changed) is told which key to give.
func TestSealerRefusesAHandoverToAnotherKey(t *testing.T) {
	path := auditPath(t)
	pendingHandover(t, path)
	other, _ := testKeys(t, "other")
	appendLocked(t, path, lines(0, 1))
	err := newSealer(t, other).Seal(bg, path)
	require.ErrorContains(t, err, "hands the log over to the key next+")
	require.ErrorContains(t, err, "the collector starts the new log with that key (file.integrity.signing_key_file)")
	require.False(t, holdsData(CheckpointsPath(path)), "nothing signed")
}

// A log that starts from a handover rotates as any other: the segments
// follow the handover record, and the trail verifies.
func TestHandedOverLogRotates(t *testing.T) {
	path, pub, keys := handedOverTrail(t)
	sl, err := LoadSegmentLog(path, keys.Verifier)
	require.NoError(t, err)
	require.NotNil(t, sl.Genesis())
	require.Greater(t, sl.Closed(), 2)
	require.Equal(t, int64(1), sl.Segments[1].First)
	res := checkTrail(t, path, pub)
	require.Empty(t, res.Failures)
	require.Equal(t, int64(40), res.Lines)
	require.Equal(t, int64(41), res.Sealed)
}

// handedOverTrail writes 40 lines through a rotating file sink into a log
// that starts from a handover note (its leaf 0), sealed as they come. It
// returns the path, the public key file and the keys.
func handedOverTrail(t *testing.T) (string, string, *Keys) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "events.jsonl")
	keys, pub, _ := pendingHandover(t, path)
	sealer := newSealer(t, keys)
	rot := &filesink.Rotation{MaxBytes: 100}
	sink := sealedSink(t, path, rot, sealer)
	writeSealed(t, sink, sealer, 0, 40)
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(bg))
	return path, pub, keys
}

// In a log that starts from a handover, line N is leaf N: a problem names
// the lines as the file holds them, not counting the note's leaf.
func TestHandedOverTrailProblemsNameLines(t *testing.T) {
	t.Run("a segment missing", func(t *testing.T) {
		path, pub, keys := handedOverTrail(t)
		seg := handedOverSegment(t, path, keys, 2)
		require.NoError(t, os.Remove(filepath.Join(filepath.Dir(path), seg.Name)))
		res := checkTrail(t, path, pub)
		require.Contains(t, strings.Join(res.Failures, "\n"),
			fmt.Sprintf("segment %s (lines %d-%d of the log) is missing", seg.Name, seg.First, seg.First+seg.Count-1))
		require.Contains(t, strings.Join(res.Failures, "\n"),
			fmt.Sprintf("but the part before ends at line %d: lines %d-%d are missing", seg.First-1, seg.First, seg.First+seg.Count-1))
	})
	t.Run("a line edited", func(t *testing.T) {
		path, pub, keys := handedOverTrail(t)
		seg := handedOverSegment(t, path, keys, 2)
		file := filepath.Join(filepath.Dir(path), seg.Name)
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		second := strings.SplitAfter(string(b), "\n")[1]
		edited := strings.Replace(string(b), second, strings.Replace(second, `"n"`, `"m"`, 1), 1)
		require.NotEqual(t, string(b), edited)
		require.NoError(t, os.WriteFile(file, []byte(edited), 0o600))
		res := checkTrail(t, path, pub)
		failures := strings.Join(res.Failures, "\n")
		require.Contains(t, failures, fmt.Sprintf("%s:2: this line (line %d of the log) is not the one the newest checkpoint (40 lines) holds there", file, seg.First+1))
		require.NotContains(t, failures, "41 lines")
	})
}

// handedOverSegment is the record of the i-th closed segment of the
// handed-over log at path (1 is the first; 0 is the handover record).
func handedOverSegment(t *testing.T, path string, keys *Keys, i int) SegmentRecord {
	t.Helper()
	sl, err := LoadSegmentLog(path, keys.Verifier)
	require.NoError(t, err)
	require.Greater(t, len(sl.Segments), i+1)
	return sl.Segments[i]
}

func TestSegmentLogRefusesAMisplacedHandoverRecord(t *testing.T) {
	keys, _ := testKeys(t, "k")
	seg := SegmentRecord{Origin: "k/a", Name: "a-1.jsonl", First: 0, Count: 1, EndRange: []tlog.Hash{{1}}}
	gen := SegmentRecord{Origin: "k/a", Name: "a.handover", First: 0, Count: 1, EndRange: []tlog.Hash{{1}}, Genesis: true}
	var buf []byte
	for _, r := range []SegmentRecord{seg, gen} {
		msg, err := SignSegmentRecord(r, keys.Signer)
		require.NoError(t, err)
		buf = AppendRecord(buf, msg)
	}
	_, err := ReadSegmentLog(strings.NewReader(string(buf)), keys.Verifier)
	require.ErrorContains(t, err, "a handover record after the first")

	_, err = parseSegmentRecord("sandboxaudit handover v1\nk/a\na.handover\n0\n2\n" + strings.Repeat("AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=\n", 1))
	require.ErrorContains(t, err, "a handover record is leaf 0 alone")
}

// prove and verify-proof place line N of a handed-over log at leaf N.
func TestProveALogThatStartsFromAHandover(t *testing.T) {
	path := auditPath(t)
	keys, _, _ := pendingHandover(t, path)
	appendLocked(t, path, lines(0, 6))
	require.NoError(t, newSealer(t, keys).Seal(bg, path))
	for line := int64(1); line <= 7; line++ {
		b, err := Prove(path, line)
		require.NoError(t, err)
		require.Equal(t, int64(1), b.First)
		parsed, err := ParseBundle(b.Format())
		require.NoError(t, err)
		require.Equal(t, int64(1), parsed.First)
		cp, err := VerifyBundle(parsed, keys.Verifier)
		require.NoError(t, err)
		require.Equal(t, int64(8), cp.N)
		require.Equal(t, lines(int(line-1), int(line-1)), string(parsed.Record))
		parsed.First = 0 // the same line claimed at leaf N-1
		_, err = VerifyBundle(parsed, keys.Verifier)
		require.Error(t, err)
	}
	_, err := Prove(path, 8)
	require.ErrorContains(t, err, "the newest checkpoint covers lines 1-7 of this file")
}

// A log that started from the note, whose segments sidecar (the record of
// its leaf 0) was removed, as one that looks unneeded beside a file that
// never rotated: the seal is refused, naming the missing record, not as
// a line changed or cut.
func TestSealerNamesAHandoverRecordGone(t *testing.T) {
	path := auditPath(t)
	keys, _, _ := pendingHandover(t, path)
	appendLocked(t, path, lines(0, 1))
	require.NoError(t, newSealer(t, keys).Seal(bg, path))
	require.NoError(t, os.Remove(SegmentsPath(path)))
	err := newSealer(t, keys).Seal(bg, path)
	require.ErrorIs(t, err, ErrTampered)
	require.ErrorContains(t, err, "the log starts from the handover note in "+HandoverPath(path)+
		", but the segments sidecar that records it as leaf 0 is missing or empty: put "+SegmentsPath(path)+" back")
}

// first-leaf is not signed: a bundle renumbered ("line 1, first-leaf 2"
// for "line 2, first-leaf 1") still proves the same leaf, and only that.
func TestRenumberedBundleProvesTheSameLeaf(t *testing.T) {
	path := auditPath(t)
	keys, _, _ := pendingHandover(t, path)
	appendLocked(t, path, lines(0, 3))
	require.NoError(t, newSealer(t, keys).Seal(bg, path))
	b, err := Prove(path, 2)
	require.NoError(t, err)
	text := strings.Replace(string(b.Format()), "line 2\nfirst-leaf 1\n", "line 1\nfirst-leaf 2\n", 1)
	renumbered, err := ParseBundle([]byte(text))
	require.NoError(t, err)
	require.Equal(t, b.First+b.Line, renumbered.First+renumbered.Line)
	_, err = VerifyBundle(renumbered, keys.Verifier)
	require.NoError(t, err)
	renumbered.First++
	_, err = VerifyBundle(renumbered, keys.Verifier)
	require.ErrorContains(t, err, "is not proven by the checkpoint")
	for _, bad := range []string{"first-leaf 0", "first-leaf 9223372036854775807", "first-leaf -1"} {
		_, err = ParseBundle([]byte(strings.Replace(text, "first-leaf 2", bad, 1)))
		require.ErrorContains(t, err, `line 3 must be "first-leaf F" with F >= 1`)
	}
}
