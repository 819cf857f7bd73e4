package filesink

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
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

// belowRoot returns the entry of the filesystem root on the way down to
// dir (dir itself when it is the root or just below it).
func belowRoot(dir string) string {
	for e := dir; ; e = filepath.Dir(e) {
		if p := filepath.Dir(e); p == e || filepath.Dir(p) == p {
			return e
		}
	}
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
// a sync of its directory after it succeeds, and returns the making's
// generation (see remember). Each open looks up the entries from Sink.top
// down: until that sync, no batch is acknowledged below entry.
func (s *Sink) making(entry string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.durable, entry)
	s.gen++
	s.remade[s.bucket(entry)] = s.gen
	return s.gen
}

// generation is the count of makings so far: a sync that begins now
// holds the entries made up to it.
func (s *Sink) generation() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

// bucket is entry's slot in Sink.remade. Called with s.mu held.
func (s *Sink) bucket(entry string) uint64 {
	return maphash.String(s.seed, entry) % uint64(len(s.remade))
}

// remember records entry, found or made before a sync of its directory
// that began at generation since and succeeded, as durable; when entry is
// the file at path, with its identity fi (nil: unknown, so not durable).
// An entry (or one sharing its bucket) made again after since is left
// out: that sync may have missed it. Past maxDurable an arbitrary entry
// is dropped first.
func (s *Sink) remember(entry, path string, fi os.FileInfo, since uint64) {
	if entry == path && fi == nil {
		return
	}
	if entry != path {
		fi = nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.remade[s.bucket(entry)] > since {
		return
	}
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
		since := s.generation()
		if err := s.syncDirFn(dir); err != nil && !s.unreadableAbove(dir, err) {
			return fmt.Errorf("sync directory %s for the entry of %s: %w", dir, of.path, err)
		}
		of.unsynced = of.unsynced[1:]
		if e := entryIn(dir, of.path); e != "" {
			s.remember(e, of.path, of.ident, since)
		}
	}
	of.unsynced = nil
	return nil
}

// unreadableAbove reports whether err is a sync of dir, a directory
// above the base's parent, that can never succeed: a refused open (a
// collector without read access to a 0711 home, say), or a filesystem
// that does not sync directories or is read-only (some FUSE and 9p
// mounts; another mount than the base's). Failing every batch for it
// would stop the sink for good.
func (s *Sink) unreadableAbove(dir string, err error) bool {
	never := errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EINVAL) ||
		errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EROFS)
	return never && len(dir) < len(filepath.Dir(s.tmpl.base))
}
