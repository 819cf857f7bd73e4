package integrity

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// streamTrail streams every part of tr through a TrailChecker.
func streamTrail(t testing.TB, tr *Trail, v note.Verifier) TrailResult {
	t.Helper()
	c, err := NewTrailChecker(tr, v)
	require.NoError(t, err)
	defer func() { _ = c.Close() }()
	for i, p := range tr.Parts {
		r, err := p.Open()
		require.NoError(t, err)
		c.BeginPart(i)
		_, err = io.Copy(c.Writer(), r)
		require.NoError(t, r.Close())
		require.NoError(t, err)
		c.EndPart()
	}
	return c.Finish()
}

// checkAlone verifies one closed segment alone against its log's newest
// checkpoint.
func checkAlone(t testing.TB, segment, pubPath string) TrailResult {
	t.Helper()
	v, err := LoadVerifierKey(pubPath)
	require.NoError(t, err)
	tr, err := OpenSegmentAlone(segment, v)
	require.NoError(t, err)
	return streamTrail(t, tr, v)
}

// countCheckpoints is the number of records in path's checkpoints.
func countCheckpoints(t testing.TB, path string) int {
	t.Helper()
	f, err := os.Open(CheckpointsPath(path))
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	nr, n := NewNoteReader(f), 0
	for {
		_, err := nr.Next()
		if err == io.EOF {
			return n
		}
		require.NoError(t, err)
		n++
	}
}

// forgeStoreAfter flips every stored hash of the tree beyond its first n
// leaves: the store then lies about the lines after them.
func forgeStoreAfter(t testing.TB, path string, n int64) {
	t.Helper()
	b, err := os.ReadFile(StorePath(path))
	require.NoError(t, err)
	for i := tlog.StoredHashCount(n) * tlog.HashSize; i < int64(len(b)); i++ {
		b[i] ^= 0x5a
	}
	require.NoError(t, os.WriteFile(StorePath(path), b, 0o600))
}

// forgeStoreFrom rewrites the hash store, as a forger with the trail but
// not the signing key would, so that it agrees with the trail's lines as
// they now are from the part seg on (leaf first): the store is then a
// whole tree of the changed log.
func forgeStoreFrom(t testing.TB, path, seg string, first int64) {
	t.Helper()
	require.NoError(t, os.Truncate(StorePath(path), tlog.StoredHashCount(first)*tlog.HashSize))
	store, _, err := openStore(StorePath(path), &storeScratch{})
	require.NoError(t, err)
	require.Equal(t, first, store.n)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	var files []string
	for _, sg := range segs {
		if sg.Path == seg || len(files) > 0 {
			files = append(files, sg.Path)
		}
	}
	require.NotEmpty(t, files, "%s is a segment of the trail", seg)
	for _, name := range append(files, path) {
		var data []byte
		if strings.HasSuffix(name, filesink.ZstdSuffix) {
			data = readZstdFile(t, name)
		} else {
			data, err = os.ReadFile(name)
			require.NoError(t, err)
		}
		_, err = NewLeafHasher(store.add).Write(data)
		require.NoError(t, err)
	}
	require.NoError(t, store.flush())
	require.NoError(t, store.close())
}

// Retention removes the 3 oldest of 8 segments, then each case changes the
// trail; every kept segment is proven in the newest checkpoint, by the
// lines after it or, across a gap, by a consistency proof from the store.
func TestSegmentsProvenAcrossAGap(t *testing.T) {
	const total = 78
	for _, tc := range []struct {
		name string
		// change alters the trail and returns the segment to check alone
		// (nil: the whole trail).
		change func(t *testing.T, path string, segs []filesink.Segment, recs map[string]SegmentRecord) *filesink.Segment
		// want is the failure expected ("": none); byStore the kept
		// segments proven by the store rather than by the lines after.
		want    func(segs []filesink.Segment, recs map[string]SegmentRecord) string
		byStore []int
	}{
		{name: "retention removed the 3 oldest: the trail",
			change: func(*testing.T, string, []filesink.Segment, map[string]SegmentRecord) *filesink.Segment { return nil }},
		{name: "retention removed the 3 oldest: each segment alone",
			change: func(_ *testing.T, _ string, segs []filesink.Segment, _ map[string]SegmentRecord) *filesink.Segment {
				return &segs[1]
			},
			byStore: []int{1}},
		{name: "a kept segment with one line edited",
			change: func(t *testing.T, _ string, segs []filesink.Segment, _ map[string]SegmentRecord) *filesink.Segment {
				rewriteZstd(t, segs[1].Path, func(b []byte) []byte { return editLine(b, 3) })
				return nil
			},
			want: func(segs []filesink.Segment, recs map[string]SegmentRecord) string {
				return fmt.Sprintf("%s:3: this line (line %d of the log) is not the one", segs[1].Path, recs[segName(segs[1])].First+3)
			}},
		{name: "a kept segment with one line edited, alone",
			change: func(t *testing.T, _ string, segs []filesink.Segment, _ map[string]SegmentRecord) *filesink.Segment {
				rewriteZstd(t, segs[2].Path, func(b []byte) []byte { return editLine(b, 5) })
				return &segs[2]
			},
			want: func(segs []filesink.Segment, recs map[string]SegmentRecord) string {
				return fmt.Sprintf("%s:5: this line (line %d of the log) is not the one", segs[2].Path, recs[segName(segs[2])].First+5)
			}},
		{name: "a segment removed without a retention record",
			change: func(t *testing.T, _ string, segs []filesink.Segment, _ map[string]SegmentRecord) *filesink.Segment {
				require.NoError(t, os.Remove(segs[2].Path))
				return nil
			},
			want: func(segs []filesink.Segment, _ map[string]SegmentRecord) string {
				return segName(segs[2]) + " (lines"
			},
			byStore: []int{0, 1}},
		{name: "a middle segment missing, a later one alone",
			change: func(t *testing.T, _ string, segs []filesink.Segment, _ map[string]SegmentRecord) *filesink.Segment {
				require.NoError(t, os.Remove(segs[2].Path))
				return &segs[3]
			},
			byStore: []int{3}},
		{name: "a forged hash store, a segment alone",
			change: func(t *testing.T, path string, segs []filesink.Segment, recs map[string]SegmentRecord) *filesink.Segment {
				forgeStoreAfter(t, path, recs[segName(segs[1])].End())
				return &segs[1]
			},
			want: func(segs []filesink.Segment, _ map[string]SegmentRecord) string {
				return segs[1].Path + ": lines"
			}},
		{name: "a forged hash store across a gap",
			change: func(t *testing.T, path string, segs []filesink.Segment, recs map[string]SegmentRecord) *filesink.Segment {
				require.NoError(t, os.Remove(segs[3].Path))
				forgeStoreAfter(t, path, recs[segName(segs[2])].End())
				return nil
			},
			want: func(segs []filesink.Segment, _ map[string]SegmentRecord) string {
				return segs[2].Path + ": lines"
			}},
		{name: "a segment edited and the store rehashed from the edited lines, alone",
			change: func(t *testing.T, path string, segs []filesink.Segment, recs map[string]SegmentRecord) *filesink.Segment {
				rewriteZstd(t, segs[2].Path, func(b []byte) []byte { return editLine(b, 5) })
				forgeStoreFrom(t, path, segs[2].Path, recs[segName(segs[2])].First)
				return &segs[2]
			},
			want: func(segs []filesink.Segment, _ map[string]SegmentRecord) string {
				return segs[2].Path + ": its lines do not end in the tree its signed segment record ends with"
			}},
		{name: "no hash store, a segment alone",
			change: func(t *testing.T, path string, segs []filesink.Segment, _ map[string]SegmentRecord) *filesink.Segment {
				require.NoError(t, os.Remove(StorePath(path)))
				return &segs[0]
			},
			want: func(_ []filesink.Segment, _ map[string]SegmentRecord) string { return "there is no hash store" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, pub, _ := rotatedTrail(t, total, true, 5)
			v, err := LoadVerifierKey(pub)
			require.NoError(t, err)
			tr, err := OpenTrail(path, v)
			require.NoError(t, err)
			require.Equal(t, 3, tr.Retired, "retention removed the 3 oldest of 8")
			segs, err := filesink.Segments(path)
			require.NoError(t, err)
			require.Len(t, segs, 5)
			recs := map[string]SegmentRecord{}
			for _, r := range tr.Log.Segments {
				recs[r.Name] = r
			}
			newest := countCheckpoints(t, path)

			var res TrailResult
			if seg := tc.change(t, path, segs, recs); seg != nil {
				res = checkAlone(t, seg.Path, pub)
			} else {
				res = checkTrail(t, path, pub)
			}
			if tc.want != nil {
				require.Contains(t, strings.Join(res.Failures, "\n"), tc.want(segs, recs))
				if tc.byStore == nil {
					return
				}
			} else {
				require.Empty(t, res.Failures)
			}
			byStore := map[string]bool{}
			for _, i := range tc.byStore {
				byStore[segs[i].Path] = true
			}
			require.NotEmpty(t, res.Proofs)
			for _, p := range res.Proofs {
				rec := recs[segName(filesink.Segment{Plain: strings.TrimSuffix(p.Path, filesink.ZstdSuffix)})]
				require.Equal(t, SegmentProof{Path: p.Path, First: rec.First, End: rec.End(), Checkpoint: newest, Size: total,
					ByLines: !byStore[p.Path]}, p, "each kept segment is proven in the newest checkpoint")
			}
		})
	}
}

func segName(s filesink.Segment) string {
	return s.Plain[strings.LastIndexByte(s.Plain, os.PathSeparator)+1:]
}

// editLine changes the n-th line (from 1) of b, keeping its length.
func editLine(b []byte, n int) []byte {
	start := 0
	for range n - 1 {
		start += bytes.IndexByte(b[start:], '\n') + 1
	}
	out := bytes.Clone(b)
	i := bytes.Index(out[start:], []byte(`"n":`))
	out[start+i+1] = 'N'
	return out
}
