package integrity

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// SegmentsSuffix names the sidecar that records, for one audit path, each
// closed segment of its log and each removal by retention: signed notes,
// appended in the checkpoints sidecar's record format (notefile.go).
const SegmentsSuffix = ".segments"

// SegmentsPath is the segments sidecar of the audit path.
func SegmentsPath(path string) string { return path + SegmentsSuffix }

// Record kinds of the segments sidecar.
const (
	segmentHeader   = "sandboxaudit segment v1"
	retentionHeader = "sandboxaudit retention v1"
	genesisHeader   = "sandboxaudit handover v1"
)

// SegmentRecord says that the closed segment Name (its file name before
// compression) holds the leaves First to First+Count-1 of the log Origin,
// and gives the compact range at its start: the roots of the largest
// complete subtrees left of First, largest first (a Frontier at size
// First). With them, the segment's lines alone give the tree's root at any
// size up to its end, so the segment verifies against a checkpoint without
// the segments before it.
type SegmentRecord struct {
	Origin string
	Name   string
	First  int64
	Count  int64
	Range  []tlog.Hash
	// EndRange is the compact range at the segment's end (the next
	// segment's Range).
	EndRange []tlog.Hash
	// Retired marks a retention record: the segment was removed on
	// purpose, by the collector's retention, after this record was signed.
	Retired bool
	// Genesis marks the record of a log's leaf 0 when the log was handed
	// over from another key: that leaf is the record hash of the handover
	// note (EndRange[0]), kept in the sidecars rather than as a line of the
	// audit file. Name is the note's file (PATH.handover).
	Genesis bool
}

// End is the leaf index after the segment's last line.
func (r SegmentRecord) End() int64 { return r.First + r.Count }

// Start is the tree at the segment's start, ready for its lines.
func (r SegmentRecord) Start() (Frontier, error) { return FrontierAt(r.First, r.Range) }

// format is the record's note text.
func (r SegmentRecord) format() []byte {
	var b bytes.Buffer
	if r.Retired {
		fmt.Fprintf(&b, "%s\n%s\n%s\n%d\n%d\n", retentionHeader, r.Origin, r.Name, r.First, r.Count)
		return b.Bytes()
	}
	header := segmentHeader
	if r.Genesis {
		header = genesisHeader
	}
	fmt.Fprintf(&b, "%s\n%s\n%s\n%d\n%d\n", header, r.Origin, r.Name, r.First, r.Count)
	for _, h := range append(append([]tlog.Hash(nil), r.Range...), r.EndRange...) {
		b.WriteString(base64.StdEncoding.EncodeToString(h[:]))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// SignSegmentRecord returns r as a signed note.
func SignSegmentRecord(r SegmentRecord, s note.Signer) ([]byte, error) {
	msg, err := note.Sign(&note.Note{Text: string(r.format())}, s)
	if err != nil {
		return nil, fmt.Errorf("sign segment record: %w", err)
	}
	return msg, nil
}

// OpenSegmentRecord verifies a signed segment or retention record and
// parses it.
func OpenSegmentRecord(msg []byte, v note.Verifier) (SegmentRecord, error) {
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return SegmentRecord{}, describeNoteError(err, v)
	}
	return parseSegmentRecord(n.Text)
}

func parseSegmentRecord(text string) (SegmentRecord, error) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) < 5 {
		return SegmentRecord{}, errors.New("segment record: fewer than five lines")
	}
	var r SegmentRecord
	switch lines[0] {
	case segmentHeader:
	case retentionHeader:
		r.Retired = true
	case genesisHeader:
		r.Genesis = true
	default:
		return SegmentRecord{}, fmt.Errorf("segment record: unknown kind %q", lines[0])
	}
	r.Origin, r.Name = lines[1], lines[2]
	if r.Origin == "" || r.Name == "" || r.Name != filepath.Base(r.Name) || r.Name == "." || r.Name == ".." {
		return SegmentRecord{}, fmt.Errorf("segment record: bad origin %q or file name %q", r.Origin, r.Name)
	}
	var err1, err2 error
	r.First, err1 = strconv.ParseInt(lines[3], 10, 64)
	r.Count, err2 = strconv.ParseInt(lines[4], 10, 64)
	if err1 != nil || err2 != nil || r.First < 0 || r.Count < 0 || r.First > r.First+r.Count {
		return SegmentRecord{}, fmt.Errorf("segment record: bad first leaf %q or count %q", lines[3], lines[4])
	}
	if r.Genesis && (r.First != 0 || r.Count != 1) {
		return SegmentRecord{}, fmt.Errorf("segment record: a handover record is leaf 0 alone, not leaves %d to %d", r.First, r.End()-1)
	}
	if r.Retired {
		if len(lines) != 5 {
			return SegmentRecord{}, errors.New("segment record: extra lines in a retention record")
		}
		return r, nil
	}
	nStart, nEnd := bits.OnesCount64(uint64(r.First)), bits.OnesCount64(uint64(r.End()))
	if len(lines)-5 != nStart+nEnd {
		return SegmentRecord{}, fmt.Errorf("segment record: %d compact range hashes for leaves %d to %d, which need %d",
			len(lines)-5, r.First, r.End(), nStart+nEnd)
	}
	for i, l := range lines[5:] {
		h, err := base64.StdEncoding.Strict().DecodeString(l)
		if err != nil || len(h) != tlog.HashSize {
			return SegmentRecord{}, fmt.Errorf("segment record: compact range hash %q is not %d bytes of base64", l, tlog.HashSize)
		}
		if i < nStart {
			r.Range = append(r.Range, tlog.Hash(h))
		} else {
			r.EndRange = append(r.EndRange, tlog.Hash(h))
		}
	}
	return r, nil
}

// FrontierAt is the tree of size n whose compact range is roots (largest
// subtree first).
func FrontierAt(n int64, roots []tlog.Hash) (Frontier, error) {
	if n < 0 || len(roots) != bits.OnesCount64(uint64(n)) {
		return Frontier{}, fmt.Errorf("a compact range of %d hashes does not fit a tree of %d leaves", len(roots), n)
	}
	return Frontier{n: n, roots: append([]tlog.Hash(nil), roots...)}, nil
}

// Roots is the tree's compact range (largest subtree first).
func (f *Frontier) Roots() []tlog.Hash { return append([]tlog.Hash(nil), f.roots...) }

// compactRange reads the compact range at size n from a hash store: the
// stored hash of each complete subtree left of n.
func compactRange(n int64, r tlog.HashReader) ([]tlog.Hash, error) {
	var idx []int64
	start := int64(0)
	for level := 62; level >= 0; level-- {
		if n&(1<<level) == 0 {
			continue
		}
		idx = append(idx, tlog.StoredHashIndex(level, start>>level))
		start += 1 << level
	}
	if len(idx) == 0 {
		return nil, nil
	}
	return r.ReadHashes(idx)
}

// SegmentLog is the content of a segments sidecar: the closed segments in
// order and the retention records.
type SegmentLog struct {
	Segments []SegmentRecord // closed segments, in leaf order
	Retired  map[string]SegmentRecord
	size     int64 // bytes of whole records read
}

// End is the leaf index the active file starts at.
func (sl *SegmentLog) End() int64 {
	if len(sl.Segments) == 0 {
		return 0
	}
	return sl.Segments[len(sl.Segments)-1].End()
}

// ReadSegmentLog reads and checks a segments sidecar: every record signed
// by v, of one origin, each segment starting where the one before ended,
// and each retention record naming a recorded segment. A torn last record
// is returned as ErrTornRecord with the records before it.
func ReadSegmentLog(r io.Reader, v note.Verifier) (*SegmentLog, error) {
	sl := &SegmentLog{Retired: map[string]SegmentRecord{}}
	nr := NewNoteReader(r)
	origin := ""
	for i := 1; ; i++ {
		msg, err := nr.Next()
		if err == io.EOF {
			sl.size = nr.Offset()
			return sl, nil
		}
		if err != nil {
			sl.size = nr.Offset()
			return sl, fmt.Errorf("segment record #%d: %w", i, err)
		}
		rec, err := OpenSegmentRecord(msg, v)
		if err != nil {
			return sl, fmt.Errorf("segment record #%d: %w", i, err)
		}
		if origin != "" && rec.Origin != origin {
			return sl, fmt.Errorf("segment record #%d: origin %q differs from %q", i, rec.Origin, origin)
		}
		origin = rec.Origin
		if rec.Genesis && i != 1 {
			return sl, fmt.Errorf("segment record #%d: a handover record after the first", i)
		}
		if rec.Retired {
			if !sl.matches(rec) {
				return sl, fmt.Errorf("segment record #%d: retention of %s (leaves %d-%d), which no record before names",
					i, rec.Name, rec.First, rec.End()-1)
			}
			sl.Retired[rec.Name] = rec
			continue
		}
		if n := len(sl.Segments); n > 0 && !sameHashes(rec.Range, sl.Segments[n-1].EndRange) {
			return sl, fmt.Errorf("segment record #%d: %s starts from another tree than the segment before ends with", i, rec.Name)
		}
		if rec.First != sl.End() {
			return sl, fmt.Errorf("segment record #%d: %s starts at leaf %d, the segment before ends at %d", i, rec.Name, rec.First, sl.End())
		}
		sl.Segments = append(sl.Segments, rec)
	}
}

func (sl *SegmentLog) matches(ret SegmentRecord) bool {
	for _, s := range sl.Segments {
		if !s.Genesis && s.Name == ret.Name && s.First == ret.First && s.Count == ret.Count {
			return true
		}
	}
	return false
}

// retiredAfter reports whether the recorded segments from leaf n on, at
// least one, are all gone by retention (retiredBetween): the active file's
// lines start after them.
func (sl *SegmentLog) retiredAfter(n int64) bool {
	return n < sl.End() && sl.retiredBetween(n, sl.End())
}

// retiredBetween reports whether leaves from to end, end a recorded
// segment's first or the records' end, are exactly the leaves of recorded segments retention
// removed, each by its record, and every segment before them was removed
// by retention too: retention removes the oldest first, so a gap after a
// segment it kept is not its. The records are contiguous (ReadSegmentLog),
// so from need only start one.
func (sl *SegmentLog) retiredBetween(from, end int64) bool {
	starts := false
	for _, s := range sl.Segments {
		if s.Genesis || s.First >= end {
			continue
		}
		if !sl.Retired[s.Name].Retired {
			return false
		}
		starts = starts || s.First == from
	}
	return starts
}

// LoadSegmentLog reads the segments sidecar of path; a missing one is an
// empty log.
func LoadSegmentLog(path string, v note.Verifier) (*SegmentLog, error) {
	f, _, err := openRegular(SegmentsPath(path), os.O_RDONLY|noFollow, 0)
	if errors.Is(err, os.ErrNotExist) {
		return &SegmentLog{Retired: map[string]SegmentRecord{}}, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return ReadSegmentLog(f, v)
}

func sameHashes(a, b []tlog.Hash) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Genesis is the log's handover record (its leaf 0), or nil for a log
// whose leaf 0 is its first line.
func (sl *SegmentLog) Genesis() *SegmentRecord {
	if sl != nil && len(sl.Segments) > 0 && sl.Segments[0].Genesis {
		return &sl.Segments[0]
	}
	return nil
}

// Lead is how many leaves come before the log's first line: one (the
// handover record's) for a log handed over from another key.
func (sl *SegmentLog) Lead() int64 {
	if sl.Genesis() != nil {
		return 1
	}
	return 0
}

// Closed counts the records of closed segments (a handover record is not
// one).
func (sl *SegmentLog) Closed() int {
	if sl.Genesis() != nil {
		return len(sl.Segments) - 1
	}
	return len(sl.Segments)
}

// EndRange is the compact range where the active file starts.
func (sl *SegmentLog) EndRange() []tlog.Hash {
	if len(sl.Segments) == 0 {
		return nil
	}
	return sl.Segments[len(sl.Segments)-1].EndRange
}
