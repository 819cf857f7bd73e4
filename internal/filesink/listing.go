package filesink

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// dirListing is one listing of a directory, read for the closed segments
// and the kept torn lines of the audit files in it. A {session_id} path
// puts thousands of audit files side by side, so a maintenance round lists
// each directory once for all of its paths, not once per path and step.
type dirListing struct {
	err error
	// names are the regular files' names, sorted, so that a path's
	// segments are parsed from the names that begin with its stem only.
	names []string
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
		readDir = readDirUnsorted
	}
	return &listings{readDir: readDir, dirs: map[string]*dirListing{}}
}

// dir returns the listing of dir, listing it the first time.
func (l *listings) dir(dir string) *dirListing {
	if dl := l.dirs[dir]; dl != nil {
		return dl
	}
	ents, err := l.readDir(dir)
	dl := &dirListing{err: err}
	dl.torn = &tornKept{dir: dir, readDir: l.readDir}
	if err == nil {
		dl.torn.fill(ents)
		for _, e := range ents {
			if e.Type().IsRegular() { // never a symlink or a directory
				dl.names = append(dl.names, e.Name())
			}
		}
		slices.Sort(dl.names)
	}
	l.dirs[dir] = dl
	return dl
}

// withPrefix returns the names that begin with prefix.
func (dl *dirListing) withPrefix(prefix string) []string {
	i, _ := slices.BinarySearch(dl.names, prefix)
	j := i
	for j < len(dl.names) && strings.HasPrefix(dl.names[j], prefix) {
		j++
	}
	return dl.names[i:j]
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
	for _, name := range dl.withPrefix(n.stem + "-") {
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

// readDirUnsorted is os.ReadDir in the directory's own order: the segments
// are sorted in rotation order anyway, so sorting a {session_id} path's
// thousands of names first is wasted.
func readDirUnsorted(dir string) ([]os.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return f.ReadDir(-1)
}
