package sandboxauditexporter

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/component"
)

// fileClaims is what the started exporters of one collector (one
// factory) hold of the file sink. Two exporters that write one file.path
// with different rotations would each rotate the file, and remove its
// segments, by their own rules; the second to start is refused. The
// open-file limit is the process's: the files the sinks may keep open
// are counted together.
type fileClaims struct {
	mu     sync.Mutex
	claims map[component.ID]fileClaim
}

// fileClaim is one exporter's file sink: its path (absolute, symlinked
// directories resolved, placeholders kept), rotation (nil without) and
// the most files it may keep open.
type fileClaim struct {
	path     string
	rotation *RotationConfig
	open     int
}

func newFileClaims() *fileClaims {
	return &fileClaims{claims: map[component.ID]fileClaim{}}
}

// claim records id's file sink, refusing it when another exporter writes
// the same path with another rotation. open, given the files the other
// sinks may keep open and their exporters, returns this sink's or refuses
// it; it runs under the lock, so two starts cannot both take the rest.
func (c *fileClaims) claim(id component.ID, fc *FileConfig, open func(used int, by []component.ID) (int, error)) error {
	abs, err := filepath.Abs(fc.Path)
	if err != nil {
		return fmt.Errorf("file::path: %w", err)
	}
	mine := fileClaim{path: resolveDirs(abs), rotation: fc.Rotation.Get()}
	c.mu.Lock()
	defer c.mu.Unlock()
	used, by := 0, []component.ID(nil)
	for other, theirs := range c.claims {
		if other == id {
			continue
		}
		if theirs.path == mine.path && !sameRotation(theirs.rotation, mine.rotation) {
			return fmt.Errorf("file::rotation: differs from that of exporter %q, which writes the same file::path %s: "+
				"each would rotate the file and remove its segments by its own rules; give both the same rotation", other, fc.Path)
		}
		used, by = used+theirs.open, append(by, other)
	}
	slices.SortFunc(by, func(a, b component.ID) int { return strings.Compare(a.String(), b.String()) })
	if mine.open, err = open(used, by); err != nil {
		return err
	}
	c.claims[id] = mine
	return nil
}

// release forgets id's file sink.
func (c *fileClaims) release(id component.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.claims, id)
}

// sameRotation reports whether a and b rotate a file alike: both off, or
// both on with the same keys.
func sameRotation(a, b *RotationConfig) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
