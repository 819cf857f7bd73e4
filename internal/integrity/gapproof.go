package integrity

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
)

// A segment verifies alone, across a gap (docs/history.md, "Verify"): its
// signed compact range at its start and its own lines give the tree at its
// end; a consistency proof from that tree to a later checkpoint, read from
// the path's hash store, shows the segment's lines are leaves of that
// checkpoint's tree. The store keeps every leaf of the log, retired segments
// included, and is not trusted: a proof it gives is checked against the
// signed checkpoint (tlog.CheckTree), so a forged store fails.

// TreeProver proves that a tree the verifier folded itself (its size and
// root) is a prefix of a later signed checkpoint, with hashes read from an
// audit path's hash store.
type TreeProver struct {
	f      *os.File
	hashes int64  // stored hashes in the store
	why    string // why there is no store, when f is nil
}

// OpenTreeProver opens the hash store of the audit path. A missing or
// unusable store gives a prover whose proofs fail, saying why.
func OpenTreeProver(path string) *TreeProver {
	f, fi, err := openRegular(StorePath(path), os.O_RDONLY|noFollow, 0)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return &TreeProver{why: "there is no hash store " + StorePath(path)}
	case err != nil:
		return &TreeProver{why: err.Error()}
	}
	return &TreeProver{f: f, hashes: fi.Size() / tlog.HashSize}
}

// Close releases the store.
func (p *TreeProver) Close() error {
	if p == nil || p.f == nil {
		return nil
	}
	return p.f.Close()
}

// Prove checks that the tree of n leaves with the given root is a prefix
// of cp's tree.
func (p *TreeProver) Prove(n int64, root tlog.Hash, cp Checkpoint) error {
	switch {
	case cp.N < n:
		return fmt.Errorf("checkpoint of %d lines is older than the tree of %d", cp.N, n)
	case cp.N == n:
		if root != cp.Hash {
			return fmt.Errorf("the tree of %d lines does not have the checkpoint's root hash", n)
		}
		return nil
	case n == 0:
		return nil // the empty tree is a prefix of every tree
	case p.f == nil:
		return fmt.Errorf("no consistency proof from %d to %d lines: %s", n, cp.N, p.why)
	case tlog.StoredHashCount(cp.N) > p.hashes:
		return fmt.Errorf("no consistency proof from %d to %d lines: the hash store holds only %d lines",
			n, cp.N, recordsForHashCount(p.hashes))
	}
	proof, err := tlog.ProveTree(cp.N, n, storeFileReader{p.f})
	if err == nil {
		err = tlog.CheckTree(proof, cp.N, cp.Hash, n, root)
	}
	if err != nil {
		return fmt.Errorf("the consistency proof from %d to %d lines, read from the hash store, fails (%w): "+
			"the store was changed, or these lines are not the log's", n, cp.N, err)
	}
	return nil
}

// SegmentProof says which checkpoint holds a segment's lines: leaves
// First to End-1 are in checkpoint #Checkpoint (of Size leaves), or, when
// Given, in a checkpoint given from elsewhere (ProveAlso). ByLines: the
// lines read after the segment lead to that checkpoint's root; otherwise
// a consistency proof from the hash store shows it.
type SegmentProof struct {
	Path       string
	First, End int64
	Checkpoint int
	Size       int64
	ByLines    bool
	Given      bool
}

// segmentEnd is a recorded segment whose lines matched its record: the
// tree at its end, and the run of contiguous parts it belongs to.
type segmentEnd struct {
	path       string
	first, end int64
	root       tlog.Hash
	run        int
}

// ErrNotRecorded is wrapped by OpenSegmentAlone's error for a file named
// as a segment that no signed segment record names.
var ErrNotRecorded = errors.New("cannot be verified alone")

// OpenSegmentAlone lays out a trail of one closed segment (compressed or
// not), to verify it alone against the newest checkpoint of its log: the
// other segments need not be there.
func OpenSegmentAlone(segment string, v note.Verifier) (*Trail, error) {
	path, ok := filesink.ActiveOf(segment)
	if !ok {
		return nil, fmt.Errorf("%s: not a closed segment's name", segment)
	}
	var seg *filesink.Segment
	segs, err := filesink.Segments(path)
	if err != nil {
		return nil, err
	}
	for i := range segs {
		if filepath.Clean(segs[i].Path) == filepath.Clean(segment) || filepath.Clean(segs[i].Plain) == filepath.Clean(segment) {
			seg = &segs[i]
		}
	}
	if seg == nil {
		return nil, fmt.Errorf("%s: no such segment of %s", segment, path)
	}
	sl, err := LoadSegmentLog(path, v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", SegmentsPath(path), err)
	}
	t := &Trail{Path: path, Log: sl, Alone: true}
	name := filepath.Base(seg.Plain)
	for i := range sl.Segments {
		if rec := &sl.Segments[i]; !rec.Genesis && rec.Name == name {
			t.Parts = []TrailPart{{Path: seg.Path, Record: rec, Compressed: seg.Compressed}}
		}
	}
	if t.Parts == nil {
		return nil, fmt.Errorf("%s: no signed segment record of %s names it, so it %w", segment, SegmentsPath(path), ErrNotRecorded)
	}
	if p := twinProblem(*seg); p != "" {
		t.Problems = append(t.Problems, p)
	}
	return t, nil
}

// endSegment keeps the tree at a recorded segment's end, to prove it in
// the newest checkpoint at Finish.
func (c *TrailChecker) endSegment(p TrailPart) {
	c.segEnds = append(c.segEnds, segmentEnd{path: p.Path, first: p.Record.First, end: c.tree.Size(), root: c.tree.Root(), run: c.run})
}

// proveSegments says, for each recorded segment whose lines matched its
// record, which checkpoint holds it: the newest checkpoint the lines
// reached, when no gap lies between; else the newest checkpoint, by a
// consistency proof from the hash store. It says nothing when the
// checkpoints were not all read and matched: the newest is then unknown.
func (c *TrailChecker) proveSegments() {
	if c.prev == nil || c.next != nil || c.cpError != "" || len(c.segEnds) == 0 {
		return
	}
	newest, num := *c.prev, c.prevNum
	var prover *TreeProver
	lead := c.trail.Log.Lead()
	defer func() { _ = prover.Close() }()
	for _, s := range c.segEnds {
		proof := SegmentProof{Path: s.path, First: s.first, End: s.end, Checkpoint: num, Size: newest.N}
		if s.run == c.run && !c.trail.Alone && c.res.Sealed >= s.end {
			proof.ByLines = true
			c.res.Proofs = append(c.res.Proofs, proof)
			continue
		}
		if prover == nil {
			prover = OpenTreeProver(c.trail.Path)
		}
		if err := prover.Prove(s.end, s.root, newest); err != nil {
			c.fail("%s: %s of the log %s not shown to be in checkpoint #%d, the newest: %v", s.path, plural.Lines(s.first+1-lead, s.end-lead), plural.Pick(s.end-s.first, "is", "are"), num, err)
			continue
		}
		c.res.Proofs = append(c.res.Proofs, proof)
	}
}

// ProveAlso adds a signed checkpoint kept elsewhere (an auditor's copy,
// a witness's), of this log: the caller hands only those whose origin is
// Origin. For a segment alone, Finish proves the segment in it; for a
// whole trail, the log read must extend it: its first N lines have the
// checkpoint's root. Call it before the first part.
func (c *TrailChecker) ProveAlso(cp Checkpoint) {
	if c.trail.Alone {
		c.given = append(c.given, cp)
		return
	}
	c.whole.lead = c.trail.Log.Lead()
	c.whole.add(cp)
}

// Origin is the log's origin: its segment records', else its first
// checkpoint's ("" when neither can be read).
func (c *TrailChecker) Origin() string {
	switch {
	case len(c.trail.Log.Segments) > 0:
		return c.trail.Log.Segments[0].Origin
	case c.next != nil:
		return c.next.Origin
	case c.prev != nil:
		return c.prev.Origin
	}
	return ""
}

// OriginNames reports whether the log's origin names the trail's path, as
// CheckResult.OriginNames does for a file. A log that started from a
// handover names the origin its note gave it: one of the collector's
// shape (<key name>/<file>, a templated file's directories included) must
// name the path all the same, so that a session's log swapped for
// another's is caught; another origin (--next-origin) names none. A
// rotated log retired by a handover is named as at the path it left.
func (c *TrailChecker) OriginNames() bool {
	origin := c.Origin()
	if origin == "" {
		return true
	}
	if g := c.trail.Log.Genesis(); g != nil && g.Origin == origin && !strings.HasPrefix(origin, c.verifier.Name()+"/") {
		return true
	}
	path := c.trail.Path
	if dir := filepath.Dir(path); strings.HasPrefix(filepath.Base(dir), filepath.Base(path)+".retired-") {
		path = filepath.Join(filepath.Dir(dir), filepath.Base(path))
	}
	return namesFile(originFileOf(origin, c.verifier.Name()), path)
}

// proveGiven proves each recorded segment read in the checkpoints given
// for a segment alone, and settles those given for a whole trail.
func (c *TrailChecker) proveGiven() {
	if !c.trail.Alone {
		c.res.Given = c.whole.finish(c.tree.Size(), c.trail.Path, c.proveNotRead)
		return
	}
	if len(c.given) == 0 {
		return
	}
	prover := OpenTreeProver(c.trail.Path)
	defer func() { _ = prover.Close() }()
	lead := c.trail.Log.Lead()
	for _, cp := range c.given {
		for _, s := range c.segEnds {
			if err := prover.Prove(s.end, s.root, cp); err != nil {
				c.fail("%s: %s of the log %s not shown to be in the checkpoint given (%s): %v", s.path, plural.Lines(s.first+1-lead, s.end-lead), plural.Pick(s.end-s.first, "is", "are"), plural.Count(cp.N-lead, "line"), err)
				continue
			}
			c.res.Proofs = append(c.res.Proofs, SegmentProof{Path: s.path, First: s.first, End: s.end, Size: cp.N, Given: true})
		}
	}
}

// proveNotRead proves a checkpoint given whose size the lines read
// skipped (retention removed its last lines) a prefix of a signed tree
// the lines read start from or lead to (a segment read after it), by a
// consistency proof from the hash store.
func (c *TrailChecker) proveNotRead(cp Checkpoint) error {
	for _, s := range slices.Concat(c.starts, c.segEnds) {
		if s.end >= cp.N {
			prover := OpenTreeProver(c.trail.Path)
			defer func() { _ = prover.Close() }()
			// cp's tree is a prefix of the signed tree s.
			return prover.Prove(cp.N, cp.Hash, Checkpoint{Origin: cp.Origin, N: s.end, Hash: s.root})
		}
	}
	return fmt.Errorf("its line %d of the log was not read, and no signed tree the lines read start from or lead to holds it", cp.N-c.whole.lead)
}

// drainCheckpoints reads, for a segment checked alone, the checkpoints
// after it up to the newest, each signed and in order.
func (c *TrailChecker) drainCheckpoints() {
	for c.next != nil {
		c.prev, c.prevNum = c.next, c.cpNum
		c.advance()
	}
}

// errFound stops the hashing of a part once the changed line is found.
var errFound = errors.New("found")

// locateChange names the first line of a recorded segment that is not the
// log's leaf at its place. The log's leaf is the store's, and counts only
// when an inclusion proof shows it in the newest signed checkpoint, so a
// changed store cannot point at an innocent line.
func (c *TrailChecker) locateChange(p TrailPart) {
	raw, cp, err := newestCheckpoint(c.trail.Path)
	if err == nil {
		cp, err = OpenCheckpoint(raw, c.verifier)
	}
	if err != nil {
		return
	}
	prover := OpenTreeProver(c.trail.Path)
	defer func() { _ = prover.Close() }()
	if prover.f == nil || tlog.StoredHashCount(cp.N) > prover.hashes {
		return
	}
	r, err := p.Open()
	if err != nil {
		return
	}
	defer func() { _ = r.Close() }()
	reader := storeFileReader{prover.f}
	leaf, line := p.Record.First, int64(0)
	_, err = io.Copy(NewLeafHasher(func(h tlog.Hash) error {
		if leaf >= cp.N {
			return io.EOF
		}
		line++
		stored, err := reader.ReadHashes([]int64{tlog.StoredHashIndex(0, leaf)})
		if err != nil {
			return err
		}
		if stored[0] != h {
			proof, err := tlog.ProveRecord(cp.N, leaf, reader)
			if err == nil && tlog.CheckRecord(proof, cp.N, cp.Hash, leaf, stored[0]) == nil {
				return errFound
			}
			return io.EOF // the store was changed too: it cannot tell
		}
		leaf++
		return nil
	}), r)
	if errors.Is(err, errFound) {
		c.fail("%s:%d: this line (line %d of the log) is not the one the newest checkpoint (%d lines) holds there: "+
			"it was changed, or lines before it in this segment were added or removed", p.Path, line, leaf+1-c.trail.Log.Lead(), cp.N-c.trail.Log.Lead())
	}
}
