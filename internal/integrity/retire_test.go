package integrity

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// handOverLog signs a final checkpoint of path's log naming a new key, as
// the log handover command does, and returns the new log's origin.
func handOverLog(t *testing.T, path string, k *Keys) string {
	t.Helper()
	_, nextPub := testKeys(t, "next")
	return handOverLogTo(t, path, k, nextPub)
}

// handOverLogTo is handOverLog naming the verifier key in the file nextPub.
func handOverLogTo(t *testing.T, path string, k *Keys, nextPub string) string {
	t.Helper()
	nextKey, err := os.ReadFile(nextPub)
	require.NoError(t, err)
	_, last, err := NewestSigned(path, k.Verifier)
	require.NoError(t, err)
	h := Handover{Checkpoint: last, NextKey: strings.TrimSpace(string(nextKey)), NextOrigin: "next/events.jsonl"}
	signed, err := SignHandover(h, k.Signer)
	require.NoError(t, err)
	require.NoError(t, AppendHandover(path, signed))
	return h.NextOrigin
}

// A rotated log retires whole into a directory, under its own names: its
// trail still verifies there, up to the final checkpoint over every
// segment, and nothing of it is left at the path.
func TestRetireRotatedLog(t *testing.T) {
	path, pub, k := rotatedTrail(t, 100, true, 0)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	next := handOverLog(t, path, k)
	now := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	retired, err := RetireLog(path, k.Verifier, now, nil)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(path+".retired-20270101T000000Z", "events.jsonl"), retired)
	moved, err := filesink.Segments(retired)
	require.NoError(t, err)
	require.Len(t, moved, len(segs))
	left, err := filesink.Segments(path)
	require.NoError(t, err)
	require.Empty(t, left)
	require.False(t, IsTrail(path, len(left)))

	res := checkTrail(t, retired, pub)
	require.Empty(t, res.Failures)
	require.Equal(t, int64(100), res.Sealed, "the final checkpoint covers every segment")
	st, err := ReadHandover(retired, k.Verifier)
	require.NoError(t, err)
	require.NotNil(t, st.Final)
	require.Equal(t, int64(100), st.Final.N)
	links := ReadHandoverLinks(retired)
	origin, nextOrigin := links.Origin, links.Next
	require.Equal(t, "test/events.jsonl", origin)
	require.Equal(t, next, nextOrigin)

	// A line appended to a retired segment breaks its signed record.
	r, err := TrailPart{Path: moved[0].Path, Compressed: true}.Open()
	require.NoError(t, err)
	was, err := io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	plain := writeTemp(t, moved[0].Plain+".tmp-plain", string(was)+lines(999, 999))
	require.NoError(t, filesink.CompressFile(bg, plain, moved[0].Path))
	res = checkTrail(t, retired, pub)
	n := strings.Count(string(was), "\n")
	require.Contains(t, strings.Join(res.Failures, "\n"), fmt.Sprintf("holds %d lines, its signed segment record %d", n+1, n))

	// Another handover in the same second takes the next name.
	path2, _, k2 := rotatedTrail(t, 20, false, 0)
	handOverLog(t, path2, k2)
	first, err := RetireLog(path2, k2.Verifier, now, nil)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path2, []byte(lines(0, 0)), 0o600))
	require.NoError(t, os.WriteFile(SegmentsPath(path2), nil, 0o600))
	second, err := RetireLog(path2, k2.Verifier, now, nil)
	require.NoError(t, err)
	require.Equal(t, path2+".retired-20270101T000000Z-2", second)
	require.NotEqual(t, first, second)
}

// A log that never rotated retires as files beside the path.
func TestRetireUnrotatedLog(t *testing.T) {
	k, _ := testKeys(t, "test")
	path := filepath.Join(t.TempDir(), "events.jsonl")
	appendLocked(t, path, lines(0, 3))
	require.NoError(t, newSealer(t, k).Seal(bg, path))
	handOverLog(t, path, k)
	retired, err := RetireLog(path, k.Verifier, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), nil)
	require.NoError(t, err)
	require.Equal(t, path+".retired-20270101T000000Z", retired)
	fi, err := os.Stat(retired)
	require.NoError(t, err)
	require.True(t, fi.Mode().IsRegular())
	_, err = os.Stat(CheckpointsPath(retired))
	require.NoError(t, err)
	_, err = os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist)
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	require.NoError(t, os.WriteFile(name, []byte(content), 0o600))
	return name
}

// A retired log whose checkpoints sidecar was archived elsewhere is not
// a retirement a killed run began: the next handover at the path takes a
// name of its own and never writes over the older log's files.
func TestRetireKeepsAnOlderRetiredLogWithoutItsCheckpoints(t *testing.T) {
	for _, rotated := range []bool{false, true} {
		t.Run(fmt.Sprintf("rotated=%v", rotated), func(t *testing.T) {
			k, _ := testKeys(t, "test")
			path := filepath.Join(t.TempDir(), "events.jsonl")
			if rotated {
				path, _, k = rotatedTrail(t, 20, false, 0)
			} else {
				appendLocked(t, path, lines(0, 3))
				require.NoError(t, newSealer(t, k).Seal(bg, path))
			}
			handOverLog(t, path, k)
			first, err := RetireLog(path, k.Verifier, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), nil)
			require.NoError(t, err)
			require.NoError(t, os.Remove(CheckpointsPath(first))) // archived apart
			kept, err := os.ReadFile(first)
			require.NoError(t, err)

			appendLocked(t, path, lines(100, 101))
			require.NoError(t, newSealer(t, k).Seal(bg, path))
			handOverLog(t, path, k)
			second, err := RetireLog(path, k.Verifier, time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC), nil)
			require.NoError(t, err)
			require.Equal(t, path+".retired-20280101T000000Z", second)
			after, err := os.ReadFile(first)
			require.NoError(t, err)
			require.Equal(t, string(kept), string(after), "the older retired log is left as it was")
		})
	}
}

func TestRetiredFrom(t *testing.T) {
	for _, c := range []struct{ path, live string }{
		{"/a/events.jsonl.retired-20270101T000000Z", "/a/events.jsonl"},
		{"/a/events.jsonl.retired-20270101T000000Z-2", "/a/events.jsonl"},
		{"/a/events.jsonl.retired-20270101T000000Z/events.jsonl", "/a/events.jsonl"},
		{"/a/events.jsonl", ""},
		{"/a/events.jsonl.retired-later", ""},
		{"/a/.retired-20270101T000000Z", ""},
		{"/a/events.jsonl.retired-20270101T000000Z/other.jsonl", ""},
	} {
		live, ok := RetiredFrom(c.path)
		require.Equal(t, c.live != "", ok, c.path)
		require.Equal(t, c.live, live, c.path)
	}
}

// RetiredLogs finds the retired audit files beside a path, a rotated
// log's in its directory, and none of their sidecars or other names.
func TestRetiredLogs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	plain, numbered := path+".retired-20270101T000000Z", path+".retired-20270101T000000Z-2"
	rotated := path + ".retired-20280101T000000Z"
	require.NoError(t, os.Mkdir(rotated, 0o700))
	for _, p := range []string{path, plain, CheckpointsPath(plain), numbered, path + ".retired-later",
		filepath.Join(dir, "other.jsonl.retired-20270101T000000Z"), filepath.Join(rotated, "events.jsonl")} {
		writeTemp(t, p, "")
	}
	require.ElementsMatch(t, []string{plain, numbered, filepath.Join(rotated, "events.jsonl")}, RetiredLogs(path))
	require.Empty(t, RetiredLogs(filepath.Join(dir, "none.jsonl")))
}

// A next origin that verify could not read back in the final checkpoint
// (a control character, or longer than a line it reads) is refused
// before anything is signed: the handover could not be made again.
func TestSignHandoverRefusesAnOriginVerifyCannotRead(t *testing.T) {
	k, pub := testKeys(t, "test")
	next, err := os.ReadFile(pub)
	require.NoError(t, err)
	c := Checkpoint{Origin: "test/events.jsonl", N: 1}
	for _, origin := range []string{"a\rb", "a\tb", "a\x00b", "\xff", strings.Repeat("x", 5000)} {
		_, err := SignHandover(Handover{Checkpoint: c, NextKey: strings.TrimSpace(string(next)), NextOrigin: origin}, k.Signer)
		require.ErrorContains(t, err, "next origin: ", "%.20q", origin)
	}
	_, err = SignHandover(Handover{Checkpoint: c, NextKey: strings.TrimSpace(string(next)), NextOrigin: "next.example/a b"}, k.Signer)
	require.NoError(t, err)
}

// HandedOverCheck finds a witness key that signed the note of a log
// retired beside any of a directory's files, listing the directory once
// for all of them: a templated path's start checks thousands of files.
func TestHandedOverCheckListsADirectoryOnce(t *testing.T) {
	old, oldPub := testKeys(t, "old")
	_, nextPub := testKeys(t, "next")
	nextKey, err := os.ReadFile(nextPub)
	require.NoError(t, err)
	dir := t.TempDir()
	b := filepath.Join(dir, "b.jsonl")
	retired := b + ".retired-20270101T000000Z"
	signed, err := SignHandover(Handover{Checkpoint: Checkpoint{Origin: "old/b.jsonl", N: 1},
		NextKey: strings.TrimSpace(string(nextKey)), NextOrigin: "next/b.jsonl"}, old.Signer)
	require.NoError(t, err)
	require.NoError(t, WriteHandoverNote(retired, signed))
	for _, p := range []string{filepath.Join(dir, "a.jsonl"), b, retired, filepath.Join(dir, "c.jsonl")} {
		writeTemp(t, p, "")
	}
	pub, err := os.ReadFile(oldPub)
	require.NoError(t, err)
	witnessKey := strings.TrimSpace(string(pub))

	check := NewHandedOverCheck("other+00000000+AQ==", witnessKey)
	reads := 0
	check.readDir = func(d string) ([]os.DirEntry, error) {
		reads++
		return os.ReadDir(d)
	}
	for _, name := range []string{"a.jsonl", "b.jsonl", "c.jsonl"} {
		which, note := check.From(filepath.Join(dir, name))
		if name == "b.jsonl" {
			require.Equal(t, 1, which)
			require.Equal(t, HandoverPath(retired), note)
			continue
		}
		require.Equal(t, -1, which, name)
		require.Empty(t, note, name)
	}
	require.Equal(t, 1, reads, "the directory is listed once")
	which, note := HandedOverFrom(b, witnessKey)
	require.Equal(t, 0, which)
	require.Equal(t, HandoverPath(retired), note)
}
