package integrity

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/internal/zstdread"
)

// TrailPart is one file of a trail: a closed segment (compressed or not)
// or the active file.
type TrailPart struct {
	// Path is the file read.
	Path string
	// Record is the segment's record; nil for the active file and for a
	// segment the collector has not recorded yet (its lines then come
	// after every recorded one, as the active file's).
	Record *SegmentRecord
	// Compressed: Path is a zstd frame.
	Compressed bool
}

// Open returns the part's lines, decompressed. A compressed part that does
// not decode to its end fails a read with a *zstdread.DamagedError; an
// error reading the file is returned as it is.
func (p TrailPart) Open() (io.ReadCloser, error) {
	f, _, err := openRegular(p.Path, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, err
	}
	if !p.Compressed {
		return f, nil
	}
	dec, err := zstdread.NewReader(bufio.NewReaderSize(f, 64<<10), zstd.WithDecoderLowmem(true))
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("%s: %w", p.Path, err)
	}
	return zstdFile{dec, f}, nil
}

type zstdFile struct {
	*zstdread.Reader
	f *os.File
}

func (z zstdFile) Close() error { z.Reader.Close(); return z.f.Close() }

// Trail is the files of one audit path's log, in leaf order: the closed
// segments on disk, then the active file.
type Trail struct {
	Path  string
	Parts []TrailPart
	Log   *SegmentLog
	// Problems are what the layout alone shows: a recorded segment missing
	// without a retention record, a segment no record names before the
	// last recorded one (foreign, or renamed), an unreadable segments
	// sidecar.
	Problems []string
	// Retired counts the segments retention removed, by its records.
	Retired int
	// Alone: the trail is one segment checked alone (OpenSegmentAlone),
	// proven in the newest checkpoint across the segments not read.
	Alone bool
}

// IsTrail reports whether path, of which a listing of its directory found
// closedSegments closed segments, has those or a segments sidecar: it is
// then verified as a trail.
func IsTrail(path string, closedSegments int) bool {
	if closedSegments > 0 {
		return true
	}
	_, err := os.Lstat(SegmentsPath(path))
	return err == nil
}

// OpenTrail lays out the trail of the audit path: its segment records
// (checked against v) and the files on disk.
func OpenTrail(path string, v note.Verifier) (*Trail, error) {
	disk, err := filesink.Segments(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return OpenListedTrail(path, v, disk), nil
}

// OpenListedTrail is OpenTrail with path's closed segments on disk
// (filesink.Segments) taken from the caller's listing of the directory,
// made once for many audit paths.
func OpenListedTrail(path string, v note.Verifier, disk []filesink.Segment) *Trail {
	t := &Trail{Path: path}
	sl, err := LoadSegmentLog(path, v)
	if err != nil {
		var link *SymlinkError
		if errors.As(err, &link) {
			t.Problems = append(t.Problems, err.Error()) // names the sidecar
		} else {
			t.Problems = append(t.Problems, fmt.Sprintf("%s: %v", SegmentsPath(path), err))
		}
		if sl == nil {
			sl = &SegmentLog{Retired: map[string]SegmentRecord{}}
		}
	}
	t.Log = sl
	for _, s := range disk {
		if p := twinProblem(s); p != "" {
			t.Problems = append(t.Problems, p)
		}
	}
	recorded := t.addRecorded(disk)
	t.addUnrecorded(disk, recorded)
	t.addActive()
	return t
}

// addRecorded adds the parts the segment records name, in log order, and
// returns their names.
func (t *Trail) addRecorded(disk []filesink.Segment) map[string]bool {
	onDisk := map[string]filesink.Segment{}
	for _, s := range disk {
		onDisk[filepath.Base(s.Plain)] = s
	}
	sl, path := t.Log, t.Path
	lead := sl.Lead() // with a handover leaf, line i is leaf i
	recorded := map[string]bool{}
	for i := range sl.Segments {
		rec := &sl.Segments[i]
		if rec.Genesis {
			continue // leaf 0, in the sidecars: no file holds it
		}
		recorded[rec.Name] = true
		s, ok := onDisk[rec.Name]
		switch {
		case ok:
			t.Parts = append(t.Parts, TrailPart{Path: s.Path, Record: rec, Compressed: s.Compressed})
		case sl.Retired[rec.Name].Retired:
			t.Retired++
		case isSymlink(filepath.Join(filepath.Dir(path), rec.Name)) || isSymlink(filepath.Join(filepath.Dir(path), rec.Name+filesink.ZstdSuffix)):
			t.Problems = append(t.Problems, fmt.Sprintf("%s: segment %s (%s of the log) is a symbolic link, not followed: the segment is not read",
				path, rec.Name, plural.Lines(rec.First+1-lead, rec.End()-lead)))
		default:
			t.Problems = append(t.Problems, fmt.Sprintf("%s: segment %s (%s of the log) is missing, and no retention record says it was removed",
				path, rec.Name, plural.Lines(rec.First+1-lead, rec.End()-lead)))
		}
	}
	return recorded
}

// addUnrecorded adds the segments no record names yet, after the last
// recorded one; one sorting before it is a foreign or renamed segment.
func (t *Trail) addUnrecorded(disk []filesink.Segment, recorded map[string]bool) {
	last := -1
	for i, s := range disk {
		if recorded[filepath.Base(s.Plain)] {
			last = i
		}
	}
	for i, s := range disk {
		if recorded[filepath.Base(s.Plain)] {
			continue
		}
		if i < last {
			t.Problems = append(t.Problems, fmt.Sprintf("%s: no segment record names it, yet it sorts before the last recorded segment: a foreign or renamed segment", s.Path))
			continue
		}
		t.Parts = append(t.Parts, TrailPart{Path: s.Path, Compressed: s.Compressed})
	}
}

// addActive adds the active file, when it is a regular file.
func (t *Trail) addActive() {
	fi, err := os.Lstat(t.Path)
	switch {
	case err != nil:
	case fi.Mode().IsRegular():
		t.Parts = append(t.Parts, TrailPart{Path: t.Path})
	case fi.Mode()&os.ModeSymlink != 0:
		t.Problems = append(t.Problems, fmt.Sprintf("%s is a symbolic link, not followed: the active file is not read", t.Path))
	default:
		t.Problems = append(t.Problems, fmt.Sprintf("%s is not a regular file: the active file is not read", t.Path))
	}
}

func isSymlink(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

// TrailResult is what a TrailChecker found.
type TrailResult struct {
	Lines       int64 // complete lines read, over every part
	First       int64 // leaf index of the first line read (after retention)
	Checkpoints int   // checkpoints checked against the lines
	Skipped     int   // checkpoints of removed segments, not checkable
	Sealed      int64 // the newest checkpoint's size
	// Unsealed is the lines after the newest checkpoint; UnsealedParts
	// names the parts they are in.
	Unsealed      int64
	UnsealedParts []string
	// Proofs say which checkpoint holds each recorded segment read.
	Proofs []SegmentProof
	// Given says, for each checkpoint given (ProveAlso) to a whole trail,
	// whether the log read extends it.
	Given    []GivenProof
	Failures []string
	// StoreUnused says why the hash store was not read (missing from a
	// rotated log, a symlink or a FIFO in its place), and StoreDamage why
	// it does not hold the newest checkpoint's tree. The lines are checked
	// without it; --alone, --checkpoint after retention and the
	// collector's next seal need it.
	StoreUnused string
	StoreDamage string
}

// TrailChecker verifies a trail's lines, streamed part by part through
// Writer, against the log's signed checkpoints and segment records. Memory
// is flat in the trail's size: the tree is folded as the lines go by.
type TrailChecker struct {
	trail    *Trail
	verifier note.Verifier
	cpFile   *os.File
	notes    *NoteReader

	tree    Frontier
	started bool
	hasher  *LeafHasher
	part    int
	partN   int64 // lines of the current part
	cpNum   int
	next    *Checkpoint
	prev    *Checkpoint
	prevNum int
	res     TrailResult
	cpError string
	// ends are where the unrecorded parts end, to name those holding
	// unsealed lines.
	ends []partEnd
	// run counts the restarts from a segment's signed compact range: the
	// parts of one run are contiguous. segEnds are the recorded segments
	// read, for proveSegments.
	run     int
	segEnds []segmentEnd
	// starts are the signed trees the tree was started from (a segment
	// record's compact range, or the segment log's end): proveNotRead
	// leads a checkpoint given of lines not read to one of them.
	starts []segmentEnd
	// partFails is the failures before the current part's lines.
	partFails int
	// given are checkpoints from elsewhere to prove the segments in, for
	// a segment alone; whole, those the whole log read must extend.
	given []Checkpoint
	whole givenSet
}

type partEnd struct {
	path string
	end  int64
}

// NewTrailChecker opens the trail's checkpoints.
func NewTrailChecker(t *Trail, v note.Verifier) (*TrailChecker, error) {
	cp, _, err := openRegular(CheckpointsPath(t.Path), os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, fmt.Errorf("open checkpoints: %w", err)
	}
	c := &TrailChecker{trail: t, verifier: v, cpFile: cp, notes: NewNoteReader(cp), part: -1}
	c.res.Failures = append(c.res.Failures, t.Problems...)
	c.advance()
	return c, nil
}

// Close releases the checkpoints file.
func (c *TrailChecker) Close() error { return c.cpFile.Close() }

func (c *TrailChecker) fail(format string, args ...any) {
	c.res.Failures = append(c.res.Failures, fmt.Sprintf(format, args...))
}

// advance reads the next checkpoint, checking its signature and order.
func (c *TrailChecker) advance() {
	c.next = nil
	if c.cpError != "" {
		return
	}
	rec, err := c.notes.Next()
	if err == io.EOF {
		return
	}
	num := c.cpNum + 1
	if err == nil {
		var cp Checkpoint
		if cp, err = OpenCheckpoint(rec, c.verifier); err == nil {
			switch {
			case c.prev != nil && cp.Origin != c.prev.Origin:
				err = fmt.Errorf("origin %q differs from %q", cp.Origin, c.prev.Origin)
			case c.prev != nil && cp.N < c.prev.N:
				err = fmt.Errorf("tree size %d is smaller than %d before it", cp.N, c.prev.N)
			case len(c.trail.Log.Segments) > 0 && cp.Origin != c.trail.Log.Segments[0].Origin:
				err = fmt.Errorf("origin %q is not the segment records' %q", cp.Origin, c.trail.Log.Segments[0].Origin)
			}
			if err == nil {
				c.cpNum = num
				c.next = &cp
				return
			}
		}
	}
	c.cpError = fmt.Sprintf("%s: checkpoint #%d: %v", CheckpointsPath(c.trail.Path), num, err)
	c.fail("%s", c.cpError)
}

// BeginPart starts part i; its bytes then go to Writer.
func (c *TrailChecker) BeginPart(i int) {
	c.part = i
	c.partN = 0
	p := c.trail.Parts[i]
	if rec := p.Record; rec != nil && (!c.started || c.tree.Size() != rec.First || !sameHashes(c.tree.Roots(), rec.Range)) {
		// The trail starts after retention, resumes after a gap, or goes
		// on after a part that failed: the signed compact range at the
		// segment's start stands for the lines before it, so the parts
		// after a bad one are checked on their own.
		if c.started {
			c.reportBreak(p, rec)
			c.run++
		}
		t, err := rec.Start()
		if err != nil {
			c.fail("%s: %v", p.Path, err)
		}
		if !c.started {
			c.res.First = rec.First
		}
		c.restartAt(t, err, rec.First)
	}
	if sl := c.trail.Log; p.Record == nil && len(sl.Segments) > 0 && (!c.started || sl.retiredAfter(c.tree.Size())) {
		// Every recorded segment is gone, or every one after a segment put
		// back (by retention): the active part starts where the last one
		// ended.
		if c.started {
			c.run++
		} else {
			c.res.First = sl.End()
		}
		t, err := FrontierAt(sl.End(), sl.EndRange())
		if err != nil {
			c.fail("%s: %v", p.Path, err)
		}
		c.tree = t
		c.startedAt(err)
		c.skipBefore(sl.End())
	}
	c.started = true
	c.hasher = NewLeafHasher(c.leaf)
	c.atSize()
	if c.whole.due(c.tree.Size()) {
		c.whole.reach(&c.tree, c.trail.Path, c.where)
	}
	c.partFails = len(c.res.Failures)
}

// restartAt starts the tree again from t, the signed compact range at
// leaf at (err: it could not be read): a checkpoint whose root the lines
// before did not give is checked no more, and those older than at are
// passed over.
func (c *TrailChecker) restartAt(t Frontier, err error, at int64) {
	c.tree = t
	c.startedAt(err)
	if c.cpError == errRootMismatch {
		c.cpError = ""
		c.advance()
	}
	c.skipBefore(at)
}

// startedAt notes the tree just started from a signed compact range,
// unless it could not be read (err).
func (c *TrailChecker) startedAt(err error) {
	if err == nil && c.tree.Size() > 0 {
		c.starts = append(c.starts, segmentEnd{end: c.tree.Size(), root: c.tree.Root()})
	}
}

// errRootMismatch marks a checkpoint whose root the lines did not give:
// checkpoints are checked again from the next recorded segment's start.
const errRootMismatch = "root mismatch"

// reportBreak says why the part before rec's segment does not lead into
// it. A part that failed is reported already.
func (c *TrailChecker) reportBreak(p TrailPart, rec *SegmentRecord) {
	lead := c.trail.Log.Lead()
	switch n := c.tree.Size(); {
	case n < rec.First && c.trail.Log.retiredBetween(n, rec.First):
		// A segment retention removed was put back (from a backup): the
		// lines between are gone by retention's signed records.
	case n < rec.First:
		c.fail("%s: starts at line %d of the log, but the part before ends at line %d: %s %s missing",
			p.Path, rec.First+1-lead, n-lead, plural.Lines(n+1-lead, rec.First-lead), plural.Pick(rec.First-n, "is", "are"))
	case len(c.res.Failures) > c.partFails:
	case n > rec.First:
		c.fail("%s: starts at line %d of the log, but the part before already ends at line %d: lines were added before it", p.Path, rec.First+1-lead, n-lead)
	default:
		c.fail("%s: its signed segment record starts from a tree the part before does not end in", p.Path)
	}
}

// skipBefore passes over the checkpoints older than leaf n: their lines
// were removed (by retention, or are missing, which is reported).
func (c *TrailChecker) skipBefore(n int64) {
	for c.next != nil && c.next.N < n {
		c.res.Skipped++
		c.prev, c.prevNum = c.next, c.cpNum
		c.advance()
	}
}

// Writer takes the current part's bytes in order.
func (c *TrailChecker) Writer() io.Writer { return c.hasher }

func (c *TrailChecker) leaf(h tlog.Hash) error {
	c.tree.Push(h)
	c.partN++
	c.res.Lines++
	c.atSize()
	if c.whole.due(c.tree.Size()) {
		c.whole.reach(&c.tree, c.trail.Path, c.where)
	}
	return nil
}

// where names the line the tree ends at.
func (c *TrailChecker) where() string {
	p := c.trail.Parts[c.part].Path
	if c.partN == 0 {
		return "those before " + p
	}
	return fmt.Sprintf("up to line %d of %s", c.partN, p)
}

// atSize checks every checkpoint the tree has reached.
func (c *TrailChecker) atSize() {
	for c.next != nil && c.next.N == c.tree.Size() {
		cp := c.next
		if c.tree.Root() != cp.Hash {
			n := cp.N - c.trail.Log.Lead()
			c.fail("%s: the log's %s (up to line %d of this file) %s not match the root hash of checkpoint #%d: "+
				"a line was changed, added or removed in this file or in a segment before it",
				c.trail.Parts[c.part].Path, plural.First(n, "line"), c.partN, plural.Pick(n, "does", "do"), c.cpNum)
			c.cpError = errRootMismatch
			c.next = nil
			return
		}
		c.res.Checkpoints++
		c.res.Sealed = cp.N
		c.prev, c.prevNum = cp, c.cpNum
		c.advance()
	}
}

// EndPart checks the part against its segment record.
func (c *TrailChecker) EndPart() {
	p := c.trail.Parts[c.part]
	if c.hasher.Partial() {
		c.fail("%s: the last line has no newline (torn, or bytes appended)", p.Path)
	}
	rec := p.Record
	if rec == nil {
		if c.partN > 0 {
			c.ends = append(c.ends, partEnd{p.Path, c.tree.Size()})
		}
		return
	}
	switch {
	case c.partN != rec.Count:
		c.fail("%s: holds %d lines, its signed segment record %d: lines were appended, removed, or the segment was swapped", p.Path, c.partN, rec.Count)
	case !sameHashes(c.tree.Roots(), rec.EndRange):
		c.fail("%s: its lines do not end in the tree its signed segment record ends with: the segment was changed or swapped", p.Path)
	case len(c.res.Failures) == c.partFails:
		c.endSegment(p)
		return
	}
	c.locateChange(p)
	c.resumeAfter(rec)
}

// resumeAfter starts the tree again from the signed compact range a bad
// segment's record ends with, as BeginPart does from the next record's
// start: the parts after it are checked on their own, the active file
// included, whose lines are then not taken for unsealed or changed ones
// when the bad segment holds lines more or fewer than its record.
func (c *TrailChecker) resumeAfter(rec *SegmentRecord) {
	t, err := FrontierAt(rec.End(), rec.EndRange)
	if err != nil {
		return // BeginPart's checks of the next part report it
	}
	c.run++
	c.restartAt(t, nil, rec.End())
	c.atSize()
}

// Finish reports the result once every part is done.
func (c *TrailChecker) Finish() TrailResult {
	if !c.started {
		c.skipBefore(c.trail.Log.End())
	}
	if c.trail.Alone {
		c.drainCheckpoints()
		if c.prev != nil {
			c.res.Sealed = c.prev.N
		}
	}
	if c.next != nil {
		c.fail("%s: checkpoint #%d covers %d lines of the log but the trail has %d: lines or a segment were cut off the end",
			c.trail.Path, c.cpNum, c.next.N-c.trail.Log.Lead(), max(c.tree.Size()-c.trail.Log.Lead(), 0))
	}
	if c.cpNum == 0 && c.cpError == "" {
		c.fail("%s: no checkpoint: nothing is sealed yet", CheckpointsPath(c.trail.Path))
	}
	if c.started && c.tree.Size() > c.res.Sealed {
		c.res.Unsealed = c.tree.Size() - c.res.Sealed
	}
	for _, e := range c.ends {
		if e.end > c.res.Sealed {
			c.res.UnsealedParts = append(c.res.UnsealedParts, e.path)
		}
	}
	c.checkUnrecordedSealed()
	c.proveSegments()
	c.proveGiven()
	c.checkStore()
	return c.res
}

// checkUnrecordedSealed fails a closed segment no record names whose end
// a checkpoint passed: the sealer records a segment at its end before it
// seals a line after it (a checkpoint at its very end may come first), so
// its records were removed or cut, as the collector finds at start.
func (c *TrailChecker) checkUnrecordedSealed() {
	lead := c.trail.Log.Lead()
	for _, e := range c.ends {
		if e.path != c.trail.Path && e.end < c.res.Sealed {
			c.fail("%s: the closed segment %s, which no segment record names, ends at line %d of the log, but %d lines were sealed: "+
				"the segment records before it are gone (%s removed or cut), or it was sealed while verify read the trail",
				c.trail.Path, filepath.Base(e.path), e.end-lead, c.res.Sealed-lead, filepath.Base(SegmentsPath(c.trail.Path)))
			return
		}
	}
}

// checkStore checks the hash store against the newest checkpoint read.
// A log without closed segments needs none: the collector hashes its
// file again.
func (c *TrailChecker) checkStore() {
	if c.trail.Alone || c.prev == nil {
		return
	}
	c.res.StoreUnused, c.res.StoreDamage = judgeStore(c.trail.Path, *c.prev, c.trail.Log.Closed() > 0)
}
