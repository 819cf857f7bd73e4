package filesink

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Closed segments sit beside the active file: events.jsonl rotates to
// events-20261206T061500Z-000001.jsonl (and .zst once compressed). The
// timestamp is UTC and the sequence number grows by one per rotation of the
// path and never goes back, so the names sort in rotation order; a clock
// that goes back is clamped to the newest segment's time for the same
// reason.
const (
	segmentTimeLayout = "20060102T150405Z"
	// ZstdSuffix ends a compressed segment's name.
	ZstdSuffix = ".zst"
	// tmpSuffix ends a compressed segment still being written.
	tmpSuffix = ".tmp"
)

// Segment is one closed segment of an audit file.
type Segment struct {
	Path       string    // the segment's file, .zst included when compressed
	Plain      string    // its name before compression (Path without .zst)
	Seq        int64     // rotation number, from 1
	Time       time.Time // when it was closed (UTC, whole seconds)
	Compressed bool
}

// segmentNamer knows the segment names of one active file.
type segmentNamer struct {
	dir, stem, ext string
	re             *regexp.Regexp
}

func namerFor(path string) segmentNamer {
	dir, name := filepath.Split(path)
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	re := regexp.MustCompile("^" + regexp.QuoteMeta(stem) + `-(\d{8}T\d{6}Z)-(\d{6,})` + regexp.QuoteMeta(ext) + `(\.zst)?$`)
	return segmentNamer{dir: filepath.Clean(dir), stem: stem, ext: ext, re: re}
}

func (n segmentNamer) name(t time.Time, seq int64) string {
	return filepath.Join(n.dir, fmt.Sprintf("%s-%s-%06d%s", n.stem, t.UTC().Format(segmentTimeLayout), seq, n.ext))
}

// parse returns the segment a directory entry name is, if it is one.
func (n segmentNamer) parse(name string) (Segment, bool) {
	m := n.re.FindStringSubmatch(name)
	if m == nil {
		return Segment{}, false
	}
	t, err := time.Parse(segmentTimeLayout, m[1])
	if err != nil {
		return Segment{}, false
	}
	seq, err := strconv.ParseInt(m[2], 10, 64)
	if err != nil || seq <= 0 {
		return Segment{}, false
	}
	p := filepath.Join(n.dir, name)
	return Segment{Path: p, Plain: strings.TrimSuffix(p, ZstdSuffix), Seq: seq, Time: t, Compressed: m[3] != ""}, true
}

// Segments lists the closed segments of the audit file at path, oldest
// first. A segment found both plain and compressed (a compression cut
// short after its rename) is listed once, compressed. Two names with the
// same sequence number are both listed, by time then name: the rotation
// makes one only after a file was put under its number with another time
// since the last listing (see newestSegment), and a reader must see both.
func Segments(path string) ([]Segment, error) {
	return segmentsListed(path, readDirUnsorted)
}

// segmentsListed is Segments with readDir listing the directory.
func segmentsListed(path string, readDir func(string) ([]os.DirEntry, error)) ([]Segment, error) {
	n := namerFor(path)
	entries, err := readDir(n.dir)
	if err != nil {
		return nil, fmt.Errorf("list segments of %s: %w", path, err)
	}
	byName := map[string]Segment{}
	prefix := n.stem + "-" // what every name parse takes begins with
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), prefix) {
			continue // never a symlink or a directory
		}
		if s, ok := n.parse(e.Name()); ok {
			addSegment(byName, s)
		}
	}
	return sortedSegments(byName), nil
}

// SegmentGroups gathers the closed segments of a listing, by the audit
// file each belongs to, so that a directory holding many audit files (a
// {session_id} path puts one per session side by side) is listed once,
// not once per audit file.
type SegmentGroups map[string]map[string]Segment

// ListSegments lists the directory dir once and groups the closed
// segments in it by audit file.
func ListSegments(dir string) (SegmentGroups, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list segments in %s: %w", dir, err)
	}
	g := SegmentGroups{}
	for _, e := range entries {
		if e.Type().IsRegular() { // never a symlink or a directory
			g.Add(filepath.Join(dir, e.Name()))
		}
	}
	return g, nil
}

// Add takes a regular file of the listing: when it is a closed segment,
// Add keeps it and returns the audit file it belongs to.
func (g SegmentGroups) Add(file string) (active string, ok bool) {
	active, seg, ok := ParseSegment(file)
	if !ok {
		return "", false
	}
	if g[active] == nil {
		g[active] = map[string]Segment{}
	}
	addSegment(g[active], seg)
	return active, true
}

// Of returns the closed segments of the audit file at path among those
// added, as Segments lists them.
func (g SegmentGroups) Of(path string) []Segment {
	return sortedSegments(g[path])
}

// addSegment keeps s by its plain name; compressed wins over plain.
func addSegment(byName map[string]Segment, s Segment) {
	if old, dup := byName[s.Plain]; dup && old.Compressed {
		return
	}
	byName[s.Plain] = s
}

// sortedSegments returns the segments in rotation order: by sequence
// number, then time, then name.
func sortedSegments(byName map[string]Segment) []Segment {
	out := make([]Segment, 0, len(byName))
	for _, s := range byName {
		out = append(out, s)
	}
	slices.SortFunc(out, CompareSegments)
	return out
}

// CompareSegments orders two segments of one audit file in rotation order:
// by sequence number, then time, then name.
func CompareSegments(a, b Segment) int {
	return cmp.Or(cmp.Compare(a.Seq, b.Seq), a.Time.Compare(b.Time), cmp.Compare(a.Plain, b.Plain))
}

// IsSegmentOf reports whether file (absolute) is a closed segment of the
// audit file at path, compressed or not.
func IsSegmentOf(file, path string) bool {
	n := namerFor(path)
	if filepath.Dir(file) != n.dir {
		return false
	}
	_, ok := n.parse(filepath.Base(file))
	return ok
}

// segmentShape matches any segment name: stem, timestamp, sequence
// number, extension, and .zst when compressed. The extension is matched
// lazily: a name ending in .zst alone is the compressed segment of a path
// without an extension, not a plain one of a PATH.zst (an audit file is
// plain JSONL).
var segmentShape = regexp.MustCompile(`^(.+)-(\d{8}T\d{6}Z)-(\d{6,})((?:\.[^.]+)??)(\.zst)?$`)

// ActiveOf returns the audit file a closed segment belongs to
// (events-20261206T061500Z-000001.jsonl.zst: events.jsonl beside it).
func ActiveOf(file string) (string, bool) {
	active, _, ok := ParseSegment(file)
	return active, ok
}

// IsSegment reports whether file is named as a closed segment of some
// audit file, compressed or not.
func IsSegment(file string) bool {
	_, ok := ActiveOf(file)
	return ok
}

// ParseSegment returns the audit file a closed segment belongs to and the
// segment its name describes, so that a caller listing a directory once
// can group its segments without listing it again per audit file.
func ParseSegment(file string) (active string, seg Segment, ok bool) {
	dir, name := filepath.Split(file)
	m := segmentShape.FindStringSubmatch(name)
	if m == nil {
		return "", Segment{}, false
	}
	active = filepath.Join(dir, m[1]+m[4])
	if seg, ok = namerFor(active).parse(name); !ok {
		return "", Segment{}, false
	}
	return active, seg, true
}
