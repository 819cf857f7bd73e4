package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// keptTrail is a rotated trail from which retention removed the 3 oldest
// of 8 segments: the audit path, the public key, the kept segments, their
// signed records, the newest checkpoint's number and its size in lines.
type keptTrail struct {
	path, key, pub string
	segs           []filesink.Segment
	recs           map[string]integrity.SegmentRecord
	newest         int
	size           int64
	givenSize      int64 // the size of the checkpoint checkpointFile wrote
}

func newKeptTrail(t *testing.T) keptTrail {
	t.Helper()
	path, key, pub, want := retainedFixture(t, 17, 5)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	require.Len(t, segs, 5)
	v, err := integrity.LoadVerifierKey(pub)
	require.NoError(t, err)
	sl, err := integrity.LoadSegmentLog(path, v)
	require.NoError(t, err)
	require.Len(t, sl.Segments, 8, "8 segments rotated")
	require.Len(t, sl.Retired, 3, "retention removed the 3 oldest")
	kt := keptTrail{path: path, key: key, pub: pub, segs: segs, recs: map[string]integrity.SegmentRecord{},
		size: int64(strings.Count(string(want), "\n"))}
	for _, r := range sl.Segments {
		kt.recs[r.Name] = r
	}
	f, err := os.Open(integrity.CheckpointsPath(path))
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	for nr := integrity.NewNoteReader(f); ; kt.newest++ {
		if _, err := nr.Next(); err == io.EOF {
			break
		}
	}
	return kt
}

// checkpointFile writes the first signed checkpoint of the log whose size
// pick takes to a file outside the trail, as an auditor would keep it.
func (kt *keptTrail) checkpointFile(t *testing.T, pick func(int64) bool) (string, integrity.Checkpoint) {
	t.Helper()
	name, cp := keepCheckpoint(t, kt.path, kt.pub, pick)
	kt.givenSize = cp.N
	return name, cp
}

// keepCheckpoint copies the first signed checkpoint of path whose size
// pick takes to a file outside, as an auditor keeps one.
func keepCheckpoint(t *testing.T, path, pub string, pick func(int64) bool) (string, integrity.Checkpoint) {
	t.Helper()
	v, err := integrity.LoadVerifierKey(pub)
	require.NoError(t, err)
	f, err := os.Open(integrity.CheckpointsPath(path))
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	for nr := integrity.NewNoteReader(f); ; {
		rec, err := nr.Next()
		require.NoError(t, err, "no checkpoint of the size wanted")
		cp, err := integrity.OpenCheckpoint(rec, v)
		require.NoError(t, err)
		if pick(cp.N) {
			name := filepath.Join(t.TempDir(), "kept.checkpoint")
			require.NoError(t, os.WriteFile(name, rec, 0o600))
			return name, cp
		}
	}
}

func (kt keptTrail) rec(i int) integrity.SegmentRecord {
	return kt.recs[filepath.Base(kt.segs[i].Plain)]
}

// proofLine is what verify prints for kept segment i.
func (kt keptTrail) proofLine(i int, byStore bool) string {
	how := "the lines after them lead to its root"
	if byStore {
		how = "a consistency proof from the hash store, checked against its signed root"
	}
	r := kt.rec(i)
	return fmt.Sprintf("%s: integrity: lines %d-%d of the log are in checkpoint #%d (%d lines, the newest): %s",
		kt.segs[i].Path, r.First+1, r.End(), kt.newest, kt.size, how)
}

func TestVerifyAfterRetentionProvesEachSegment(t *testing.T) {
	kt := newKeptTrail(t)
	res := run(t, "", "verify", "--key", kt.pub, filepath.Dir(kt.path))
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, fmt.Sprintf("trail segments=5 retired=3 first_line=%d", kt.rec(0).First+1))
	require.Contains(t, res.stdout, fmt.Sprintf("%s: integrity: lines 1-%d of the log were removed by retention (3 segments,", kt.path, kt.rec(0).First))
	for i := range kt.segs {
		require.Contains(t, res.stdout, kt.proofLine(i, false))
	}
}

func TestVerifySegmentsAcrossAGap(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, kt *keptTrail) []string // verify's arguments after --key
		code   int
		want   func(kt keptTrail) []string
	}{
		{"a kept segment with one line edited", func(t *testing.T, kt *keptTrail) []string {
			editSegmentLine(t, kt.segs[1].Path, 3)
			return []string{filepath.Dir(kt.path)}
		}, exitProblems, func(kt keptTrail) []string {
			return []string{fmt.Sprintf("%s:3: this line (line %d of the log) is not the one the newest checkpoint (%d lines) holds there",
				kt.segs[1].Path, kt.rec(1).First+3, kt.size)}
		}},
		{"a segment removed without a retention record", func(t *testing.T, kt *keptTrail) []string {
			require.NoError(t, os.Remove(kt.segs[2].Path))
			return []string{filepath.Dir(kt.path)}
		}, exitProblems, func(kt keptTrail) []string {
			return []string{"is missing, and no retention record says it was removed",
				kt.proofLine(0, true), kt.proofLine(1, true), kt.proofLine(3, false)}
		}},
		{"a middle segment missing, a later one alone", func(t *testing.T, kt *keptTrail) []string {
			require.NoError(t, os.Remove(kt.segs[2].Path))
			return []string{"--alone", kt.segs[3].Path}
		}, exitOK, func(kt keptTrail) []string {
			return []string{kt.proofLine(3, true), fmt.Sprintf("%s: integrity: alone first_line=%d lines=%d newest=%d checkpoints=2; lines 1-%d and %d-%d of the log are in segments not read",
				kt.segs[3].Path, kt.rec(3).First+1, kt.rec(3).Count, kt.size, kt.rec(3).First, kt.rec(3).End()+1, kt.size)}
		}},
		{"a middle segment missing, every other one alone", func(t *testing.T, kt *keptTrail) []string {
			require.NoError(t, os.Remove(kt.segs[2].Path))
			return []string{"--alone", filepath.Dir(kt.path)}
		}, exitOK, func(kt keptTrail) []string {
			return []string{kt.proofLine(0, true), kt.proofLine(1, true), kt.proofLine(3, true), kt.proofLine(4, true), "files=4 "}
		}},
		{"a segment alone in a checkpoint kept elsewhere", func(t *testing.T, kt *keptTrail) []string {
			require.NoError(t, os.Remove(kt.segs[2].Path))
			name, _ := kt.checkpointFile(t, func(n int64) bool { return n > kt.rec(1).End() && n < kt.size })
			return []string{"--alone", "--checkpoint", name, kt.segs[1].Path}
		}, exitOK, func(kt keptTrail) []string {
			r := kt.rec(1)
			return []string{kt.proofLine(1, true), fmt.Sprintf("%s: integrity: lines %d-%d of the log are in the checkpoint given (%d lines): "+
				"a consistency proof from the hash store, checked against its signed root", kt.segs[1].Path, r.First+1, r.End(), kt.givenSize)}
		}},
		{"a checkpoint given older than the segment", func(t *testing.T, kt *keptTrail) []string {
			name, _ := kt.checkpointFile(t, func(n int64) bool { return n < kt.rec(3).First })
			return []string{"--alone", "--checkpoint", name, kt.segs[3].Path}
		}, exitProblems, func(kt keptTrail) []string {
			return []string{fmt.Sprintf("are not shown to be in the checkpoint given (%d lines): checkpoint of %d lines is older than the tree of %d",
				kt.givenSize, kt.givenSize, kt.rec(3).End())}
		}},
		{"a checkpoint given for a whole trail", func(t *testing.T, kt *keptTrail) []string {
			name, _ := kt.checkpointFile(t, func(n int64) bool { return n == kt.size })
			return []string{"--checkpoint", name, filepath.Dir(kt.path)}
		}, exitOK, func(kt keptTrail) []string {
			return []string{kt.proofLine(4, false), fmt.Sprintf("%s: integrity: lines 1-%d of the log are in the checkpoint given in ", kt.path, kt.size),
				fmt.Sprintf(" (%d lines): the lines read lead to its root\n", kt.size)}
		}},
		{"a kept segment with one line edited, alone", func(t *testing.T, kt *keptTrail) []string {
			editSegmentLine(t, kt.segs[2].Path, 2)
			return []string{"--alone", kt.segs[2].Path}
		}, exitProblems, func(kt keptTrail) []string {
			return []string{fmt.Sprintf("%s:2: this line (line %d of the log)", kt.segs[2].Path, kt.rec(2).First+2)}
		}},
		{"a forged hash store, a segment alone", func(t *testing.T, kt *keptTrail) []string {
			b, err := os.ReadFile(integrity.StorePath(kt.path))
			require.NoError(t, err)
			for i := tlog.StoredHashCount(kt.rec(1).End()) * tlog.HashSize; i < int64(len(b)); i++ {
				b[i] ^= 0xa5
			}
			require.NoError(t, os.WriteFile(integrity.StorePath(kt.path), b, 0o600))
			return []string{"--alone", kt.segs[1].Path}
		}, exitProblems, func(kt keptTrail) []string {
			r := kt.rec(1)
			return []string{fmt.Sprintf("%s: lines %d-%d of the log are not shown to be in checkpoint #%d, the newest: "+
				"the consistency proof from %d to %d lines, read from the hash store, fails", kt.segs[1].Path, r.First+1, r.End(), kt.newest, r.End(), kt.size)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kt := newKeptTrail(t)
			args := append([]string{"verify", "--key", kt.pub}, tc.change(t, &kt)...)
			res := run(t, "", args...)
			require.Equal(t, tc.code, res.code, res.stdout+res.stderr)
			for _, w := range tc.want(kt) {
				require.Contains(t, res.stdout, w)
			}
		})
	}
}

func TestVerifyAloneRefusesBadUse(t *testing.T) {
	kt := newKeptTrail(t)
	res := run(t, "", "verify", "--alone", kt.segs[0].Path)
	require.Equal(t, exitUsage, res.code)
	require.Contains(t, res.stderr, "--alone needs --key")
	res = run(t, "", "verify", "--key", kt.pub, "--alone", kt.path)
	require.Equal(t, exitUsage, res.code)
	require.Contains(t, res.stderr, "is not one")
	res = run(t, "", "verify", "--key", kt.pub, "--alone", t.TempDir())
	require.Equal(t, exitUsage, res.code)
	require.Contains(t, res.stderr, "no closed segment")

	name, _ := kt.checkpointFile(t, func(n int64) bool { return n == kt.size })
	res = run(t, "", "verify", "--checkpoint", name, "--alone", kt.segs[0].Path)
	require.Equal(t, exitUsage, res.code)
	require.Contains(t, res.stderr, "--checkpoint needs --key")
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	forged := strings.Replace(string(b), fmt.Sprintf("\n%d\n", kt.size), fmt.Sprintf("\n%d\n", kt.size+1), 1)
	require.NotEqual(t, string(b), forged)
	require.NoError(t, os.WriteFile(name, []byte(forged), 0o600))
	res = run(t, "", "verify", "--key", kt.pub, "--checkpoint", name, "--alone", kt.segs[0].Path)
	require.Equal(t, exitUsage, res.code)
	require.Contains(t, res.stderr, "verify: --checkpoint: "+name)

	// A checkpoint of another log, signed with the same key, proves nothing here.
	keys, err := integrity.LoadSigningKey(kt.key)
	require.NoError(t, err)
	other, err := integrity.SignCheckpoint(integrity.Checkpoint{Origin: "cli-test/other.jsonl", N: 1}, keys.Signer)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(name, other, 0o600))
	res = run(t, "", "verify", "--key", kt.pub, "--checkpoint", name, "--alone", kt.segs[0].Path)
	require.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, name+`: integrity: the checkpoint given is of the log "cli-test/other.jsonl", and no file verified is of that log`)
}

// TestVerifyAloneReportsListingErrors: a directory or file named that
// cannot be read is an I/O failure naming it, not "no closed segment".
func TestVerifyAloneReportsListingErrors(t *testing.T) {
	kt := newKeptTrail(t)
	missing := filepath.Join(t.TempDir(), "gone")
	res := run(t, "", "verify", "--key", kt.pub, "--alone", missing)
	require.Equal(t, exitProblems, res.code, res.stderr)
	require.Contains(t, res.stderr, missing+": no such file or directory")
	require.NotContains(t, res.stderr, "no closed segment")
}

// editSegmentLine changes line n (from 1) of a compressed segment.
func editSegmentLine(t *testing.T, name string, n int) {
	t.Helper()
	data := decompress(t, name)
	start := 0
	for range n - 1 {
		start += strings.IndexByte(string(data[start:]), '\n') + 1
	}
	i := start + strings.Index(string(data[start:]), `"seq":`)
	data[i+1] = 'S'
	compressTo(t, name, data)
}

// With --witness, a segment alone is proven in the cosigned checkpoints
// beyond it, across a missing segment; without the cosignatures it fails.
func TestVerifySegmentAloneWitnessed(t *testing.T) {
	dir := t.TempDir()
	sealer, pub, vkey, fake := oneWitnessSealer(t, dir)
	path, segs := sealedRotatedTrail(t, dir, sealer, filesink.Rotation{MaxBytes: 2 << 10, MaxBackups: 5, BeforeRemove: sealer.Retire})
	require.Len(t, segs, 5)

	// The whole trail after retention: each kept segment witnessed.
	res := run(t, "", "verify", "--key", pub, "--witness", vkey, filepath.Dir(path))
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Equal(t, 5, strings.Count(res.stdout, "(80 lines, the newest): the lines after them lead to its root; witnessed\n"), res.stdout)

	// One segment alone, the one before it gone.
	require.NoError(t, os.Remove(segs[2].Path))
	res = run(t, "", "verify", "--key", pub, "--witness", vkey, "--alone", segs[3].Path)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, segs[3].Path+": witness: the segment is in a checkpoint of 80 lines that 1/1 witnesses cosigned")
	require.Contains(t, res.stdout, "(80 lines, the newest): a consistency proof from the hash store, checked against its signed root; witnessed\n")

	// A forged store proves it in neither the signed nor the cosigned
	// checkpoints.
	v, err := integrity.LoadVerifierKey(pub)
	require.NoError(t, err)
	sl, err := integrity.LoadSegmentLog(path, v)
	require.NoError(t, err)
	var end int64
	for _, r := range sl.Segments {
		if r.Name == filepath.Base(segs[3].Plain) {
			end = r.End()
		}
	}
	require.Positive(t, end)
	store, err := os.ReadFile(integrity.StorePath(path))
	require.NoError(t, err)
	forged := bytes.Clone(store)
	for i := tlog.StoredHashCount(end) * tlog.HashSize; i < int64(len(forged)); i++ {
		forged[i] ^= 0xa5
	}
	require.NoError(t, os.WriteFile(integrity.StorePath(path), forged, 0o600))
	res = run(t, "", "verify", "--key", pub, "--witness", vkey, "--alone", segs[3].Path)
	require.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, "are not shown to be in checkpoint")
	require.Contains(t, res.stdout, fmt.Sprintf("which witnesses [w1.example/w+%s] cosigned, is not shown to hold the first %d lines", strings.Split(fake.VKey, "+")[1], end))
	require.NoError(t, os.WriteFile(integrity.StorePath(path), store, 0o600))

	// Without the cosignatures nothing vouches for it.
	require.NoError(t, os.Remove(integrity.WitnessedPath(path)))
	res = run(t, "", "verify", "--key", pub, "--witness", vkey, "--alone", segs[3].Path)
	require.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, segs[3].Path+": witness: no checkpoint that 1/1 witnesses cosigned holds this segment's last line")
}

// A stray file named as a segment in a directory checked alone is a
// problem of its own: the segments after it are still checked.
func TestVerifyAloneDirectoryGoesOnPastAnUnrecordedSegment(t *testing.T) {
	path, _, pub, _ := rotatedFixture(t, 40)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	stray := strings.Replace(segs[1].Path, segs[1].Time.Format("20060102T150405Z"), segs[1].Time.Add(time.Hour).Format("20060102T150405Z"), 1)
	data, err := os.ReadFile(segs[1].Path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(stray, data, 0o600))

	res := run(t, "", "verify", "--key", pub, "--alone", filepath.Dir(path))
	require.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, stray+": integrity: no signed segment record of")
	last := segs[len(segs)-1].Path
	require.Contains(t, res.stdout, last+": integrity: alone first_line=")
	require.Contains(t, res.stdout, "FAILED")
}

// After a failure, a segment alone's summary says its counts stop there,
// as a trail's does: the newest checkpoint it names is the last one that
// passed, not the log's newest.
func TestVerifyAloneSummaryAfterAFailure(t *testing.T) {
	path, _, pub, _ := rotatedFixture(t, 40)
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	seg := segs[2]
	data := decompress(t, seg.Path)
	edited := bytes.Replace(data, []byte(`"exec"`), []byte(`"read"`), 1)
	require.NotEqual(t, data, edited)
	compressTo(t, seg.Path, edited)
	res := run(t, "", "verify", "--key", pub, "--alone", seg.Path)
	require.Equal(t, exitProblems, res.code, res.stdout+res.stderr)
	require.Contains(t, res.stdout, seg.Path+": integrity: alone first_line=")
	require.Contains(t, res.stdout, "(newest and checkpoints count only what passed)")
}
