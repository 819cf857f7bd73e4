package filesink

import (
	"fmt"
	"os"
	"path/filepath"
)

// dirListing is one listing of a directory, read for the closed segments
// and the kept torn lines of the audit files in it. A {session_id} path
// puts thousands of audit files side by side, so a maintenance round lists
// each directory once for all of its paths, not once per path and step.
type dirListing struct {
	entries []os.DirEntry
	err     error
	// byActive indexes the names shaped as segments by the audit file
	// each would belong to (base names), so a path's segments are parsed
	// from its own names only.
	byActive map[string][]string
	// torn is the listing's kept torn lines; one cut after the listing
	// marks it stale (listed again before a removal).
	torn *tornKept
}

// listings lists each directory once, on first use; readDir is os.ReadDir
// when nil (a test counts the listings).
type listings struct {
	readDir func(string) ([]os.DirEntry, error)
	dirs    map[string]*dirListing
}

func newListings(readDir func(string) ([]os.DirEntry, error)) *listings {
	if readDir == nil {
		readDir = os.ReadDir
	}
	return &listings{readDir: readDir, dirs: map[string]*dirListing{}}
}

// dir returns the listing of dir, listing it the first time.
func (l *listings) dir(dir string) *dirListing {
	if dl := l.dirs[dir]; dl != nil {
		return dl
	}
	ents, err := l.readDir(dir)
	dl := &dirListing{entries: ents, err: err, byActive: map[string][]string{}}
	dl.torn = &tornKept{dir: dir, readDir: l.readDir}
	if err == nil {
		dl.torn.fill(ents)
		for _, e := range ents {
			if !e.Type().IsRegular() {
				continue // never a symlink or a directory
			}
			if m := segmentShape.FindStringSubmatch(e.Name()); m != nil {
				active := m[1] + m[4]
				dl.byActive[active] = append(dl.byActive[active], e.Name())
			}
		}
	}
	l.dirs[dir] = dl
	return dl
}

// segments returns the closed segments of the audit file at path, as
// Segments would list them.
func (l *listings) segments(path string) ([]Segment, error) {
	n := namerFor(path)
	dl := l.dir(n.dir)
	if dl.err != nil {
		return nil, fmt.Errorf("list segments of %s: %w", path, dl.err)
	}
	byName := map[string]Segment{}
	for _, name := range dl.byActive[filepath.Base(path)] {
		if s, ok := n.parse(name); ok {
			addSegment(byName, s)
		}
	}
	return sortedSegments(byName), nil
}

// tornOf returns the kept torn lines of path's directory.
func (l *listings) tornOf(path string) *tornKept {
	return l.dir(filepath.Dir(path)).torn
}
