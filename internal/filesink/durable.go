package filesink

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// undurable returns the directory of each entry from Sink.top down to
// the file at path, whose identity is fi, that this process has not made
// durable (Sink.durable), outermost first. Once the file has been opened
// in this process, it costs map lookups and no system call.
func (s *Sink) undurable(path string, fi os.FileInfo) []string {
	var dirs []string
	s.mu.Lock()
	defer s.mu.Unlock()
	for e := path; ; e = filepath.Dir(e) {
		// A file replaced since (another writer's rotation) is new.
		if known, ok := s.durable[e]; !ok || (e == path && !os.SameFile(known, fi)) {
			dirs = append(dirs, filepath.Dir(e))
		}
		if len(e) <= len(s.top) {
			break
		}
	}
	slices.Reverse(dirs)
	return dirs
}

// mustSync adds dirs, holding entries of of's file that this process has
// not made durable, to those a batch syncs before it is acknowledged; with
// FsyncNever flushing is left to the kernel, as for the lines. Called with
// of.mu held.
func (s *Sink) mustSync(of *openFile, dirs ...string) {
	if s.fsync == FsyncNever {
		return
	}
	for _, d := range dirs {
		if !slices.Contains(of.unsynced, d) {
			of.unsynced = append(of.unsynced, d)
		}
	}
}

// making drops entry, about to be made (again), from Sink.durable, until
// a sync of its directory after it succeeds. An entry above the base (one
// of its missing parents) becomes Sink.top, so that each open looks up
// the entries from there down: until that sync, no batch is acknowledged
// below it.
func (s *Sink) making(entry string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.durable, entry)
	if len(entry) < len(s.top) {
		s.top = entry
	}
}

// remember records entry, found or made before a sync of its directory
// that succeeded, as durable; when entry is the file at path, with its
// identity fi (nil: unknown, so not durable). Past maxDurable an
// arbitrary entry is dropped first.
func (s *Sink) remember(entry, path string, fi os.FileInfo) {
	if entry == path && fi == nil {
		return
	}
	if entry != path {
		fi = nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.durable[entry]; !ok && len(s.durable) >= s.maxDurable {
		for e := range s.durable {
			delete(s.durable, e)
			break
		}
	}
	s.durable[entry] = fi
}

// entryIn returns the entry of dir on the way down to path (path itself
// when dir is its directory), or "" when path is not below dir.
func entryIn(dir, path string) string {
	for e := path; len(e) > len(dir); e = filepath.Dir(e) {
		if filepath.Dir(e) == dir {
			return e
		}
	}
	return ""
}

// syncEntries syncs the directories of of.unsynced, so that a power loss
// cannot take the file (or a directory above it) with lines acknowledged
// in it; each entry so made durable is remembered (Sink.durable). One that
// fails stays, with those after it, for the next batch to try again.
// Called with of.mu held; free once they are synced.
func (s *Sink) syncEntries(of *openFile) error {
	for len(of.unsynced) > 0 {
		dir := of.unsynced[0]
		if err := s.syncDirFn(dir); err != nil {
			return fmt.Errorf("sync directory %s for the entry of %s: %w", dir, of.path, err)
		}
		of.unsynced = of.unsynced[1:]
		if e := entryIn(dir, of.path); e != "" {
			s.remember(e, of.path, of.ident)
		}
	}
	of.unsynced = nil
	return nil
}
