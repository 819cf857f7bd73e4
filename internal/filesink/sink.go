package filesink

import (
	"bytes"
	"container/list"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/groupcommit"
)

// ErrClosed is returned by WriteBatch after Close.
var ErrClosed = errors.New("sink is closed")

// Sink appends canonical lines to files named by a path template. It is safe
// for concurrent use.
type Sink struct {
	tmpl  pathTemplate
	fsync FsyncMode
	max   int
	// writeFn, syncFn, syncDirFn and lockFn are write(2), fdatasync(2),
	// fsutil.SyncDir and fsutil.Lock; tests put failing ones here.
	writeFn   func(*os.File, []byte) (int, error)
	syncFn    func(*os.File) error
	syncDirFn func(dir string) error
	lockFn    func(context.Context, int) error
	// onWrite, beforeCreate, onTornTail, onReplaced, onCutBack,
	// onRotatedByOther and onOpened are the Options hooks of those names.
	onWrite          func(path string, lines int)
	beforeCreate     func(ctx context.Context, path string) error
	onTornTail       func(path string, torn fsutil.TornTail, site TornSite)
	onReplaced       func(path string, size int64)
	onCutBack        func(path string, from, to int64)
	onRotatedByOther func(path, segment string)
	onOpened         func(path string, fi os.FileInfo)
	// rot is Options.Rotation (nil: no rotation); maint runs its
	// compression and retention.
	rot   *Rotation
	maint *maintainer
	// marks is shared with maint: the log's newest own segment per path.
	marks *ownMarks

	// dirTurn lets one rotation at a time wait for a directory's lock
	// (lockDir), so this sink's rotations queue here, not in flock polls;
	// a send takes the turn.
	dirTurn chan struct{}

	mu      sync.Mutex
	files   map[string]*openFile
	lru     *list.List // of *openFile, most recently used at the front
	waiting int        // goroutines waiting for a cache slot
	wake    chan struct{}
	closed  bool
	errs    []error // close errors of evicted files, reported by Close
	// durable holds the entries (directories and files, by path) that
	// this process made durable in their directory: a sync of it began
	// after the entry was there. A file's entry holds the file's identity,
	// a directory's nil. A batch is acknowledged in a file only once each
	// entry from Sink.top down to it is here (see undurable), so an open
	// of a file the last run left, or below a directory another path is
	// still making, syncs what it must first. Bounded by maxDurable: an
	// entry dropped costs the next open below it a sync, nothing more.
	durable    map[string]os.FileInfo
	maxDurable int
	// top is the outermost entry undurable looks up: the one below the
	// filesystem root on the way to the base, so that the first open also
	// syncs the directories above the base, which a crashed run may have
	// made without syncing their entries.
	top string
	// gen counts makings (see making); remade holds, per bucket of
	// entries (hashed with seed), the generation of the latest making of
	// one, so that a sync which began before it does not mark the entry
	// made durable (see remember).
	gen    uint64
	remade [remadeBuckets]uint64
	seed   maphash.Seed

	// live counts descriptors actually open and peak is its high-water
	// mark. Only TestOpenFilesStayBounded reads them: /proc cannot be
	// sampled atomically while writers churn descriptors, and the cache's
	// own map is the very bookkeeping under test, so the bound is checked
	// against this independent count. It costs two atomic adds per open
	// and close (a cache miss), nothing per write.
	live, peak atomic.Int64
}

// openFile is one cached descriptor. refs counts WriteBatch calls using it;
// only unreferenced entries are evicted, so a descriptor is never closed
// under a writer and the cache never exceeds its bound.
type openFile struct {
	path string
	elem *list.Element
	refs int

	// mu is held by the opener until the file is open, and then by the
	// goroutine committing a group of batches (the queue lets one commit at
	// a time, since flock, held per open file description, does not
	// exclude goroutines sharing one descriptor). It guards f and err.
	mu    sync.Mutex
	f     *os.File
	ident os.FileInfo // f's identity (device and inode), from fstat at open
	err   error       // open failure, seen by goroutines that waited on mu
	// end is f's size after our last append, which ended in a newline; -1
	// when unknown (no append yet, or one that failed). Guarded by mu.
	end   int64
	queue groupcommit.Queue
	// since is when the file's segment began (rotation, or first open),
	// for Rotation.Interval; guarded by mu.
	since time.Time
	// made is the segment the last rotation made of path while f is the
	// file that rotation opened at the path (Seq 0 otherwise): no other
	// rotation came between, so the next is named after it without
	// listing the directory. Guarded by mu.
	made Segment
	// opened is when f was opened (see Rotation.dirWait); guarded by mu.
	opened time.Time
	// unsynced lists the directories holding an entry from Sink.top down
	// to the file (one the sink made, a rotation's rename, one it found)
	// that this process has not made durable yet (Sink.durable); a batch
	// is acknowledged only once they are synced (syncEntries). nil with
	// FsyncNever. Guarded by mu.
	unsynced []string
	// cut is set when the file was found cut back (cutBack) and not yet
	// read for the torn line the cut may have left; guarded by mu.
	cut bool
}

// New validates opts and returns a Sink. No file is opened until the first
// write.
func New(opts Options) (*Sink, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	t, err := parseTemplate(opts.Path)
	if err != nil {
		return nil, fmt.Errorf("path: %w", err)
	}
	s := &Sink{
		rot:              opts.Rotation,
		tmpl:             t,
		fsync:            opts.Fsync,
		max:              opts.MaxOpenFiles,
		writeFn:          opts.writeFn,
		syncFn:           opts.syncFn,
		syncDirFn:        opts.syncDirFn,
		lockFn:           opts.lockFn,
		onWrite:          opts.OnWrite,
		beforeCreate:     opts.BeforeCreate,
		onTornTail:       opts.OnTornTail,
		onReplaced:       opts.OnReplaced,
		onCutBack:        opts.OnCutBack,
		onRotatedByOther: opts.OnRotatedByOther,
		onOpened:         opts.OnOpened,
		files:            make(map[string]*openFile),
		durable:          make(map[string]os.FileInfo),
		maxDurable:       maxDurable,
		top:              belowRoot(t.base),
		seed:             maphash.MakeSeed(),
		dirTurn:          make(chan struct{}, 1),
		lru:              list.New(),
		wake:             make(chan struct{}),
	}
	if r := opts.Rotation; r != nil {
		var idle func(context.Context) time.Duration
		if r.Interval > 0 {
			idle = s.rotateIdle
		}
		s.marks = newOwnMarks()
		s.maint = newMaintainer(r, s.marks, idle, s.forgetIfClosed, opts.OnTornTail)
		if t.static != "" {
			// A compression a crash cut short is finished now, not at
			// the first write.
			s.maint.schedule(t.static)
		}
	}
	return s, nil
}

// PathFor returns the file that lines of sessionID go to, or an error if the
// session id would take the path outside the template's base directory.
func (s *Sink) PathFor(sessionID string) (string, error) {
	return s.tmpl.expand(sessionID)
}

// WriteBatch appends data, one or more complete '\n'-terminated lines, to
// the file of sessionID. Under flock(LOCK_EX) it issues one write(2) for the
// whole batch (a short write is continued before the lock is released), then
// syncs per the fsync mode; batches written concurrently to one file share
// the lock hold and the sync (see groupcommit). Empty data is a no-op.
//
// If the file does not end in '\n' (another writer died mid-line), a '\n' is
// written first so that our first line stays intact.
func (s *Sink) WriteBatch(ctx context.Context, sessionID string, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	if data[len(data)-1] != '\n' {
		return errors.New("batch does not end with a newline")
	}
	path, err := s.PathFor(sessionID)
	if err != nil {
		return err
	}
	of, err := s.acquire(ctx, path)
	if err != nil {
		return err
	}
	defer s.release(of)
	b := &groupcommit.Batch{Data: data}
	if of.queue.Wait(b) {
		s.commit(ctx, of, b)
	}
	if b.Err() == nil && s.onWrite != nil {
		s.onWrite(path, bytes.Count(data, []byte{'\n'}))
	}
	return b.Err()
}

// maxReopens bounds how often one write chases a path that keeps being
// replaced under it.
const maxReopens = 3

// sizeIfCurrent returns the size of the file at of.path and whether it is
// still of's file. One lstat answers both: when the path's inode is the
// descriptor's, its size is the descriptor's file's size.
func (of *openFile) sizeIfCurrent() (int64, bool, error) {
	// Lstat: a symlink put in the file's place is not the file, so the
	// write reopens, and the reopen refuses it.
	pi, err := os.Lstat(of.path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("stat %s: %w", of.path, err)
	}
	return pi.Size(), os.SameFile(of.ident, pi), nil
}

// open opens of's file at of.path (creating it as a first open would,
// after beforeCreate when set) and records its identity. The directories
// of the entries from Sink.top down to the file that are not durable
// (Sink.durable) join of.unsynced, as does a new entry's whose sync failed
// even when the open then fails. Called with of.mu held.
func (s *Sink) open(of *openFile, beforeCreate func() error) (*os.File, os.FileInfo, error) {
	if s.fsync == FsyncNever {
		return s.openAt(of.path, nil, beforeCreate)
	}
	made := &newEntries{sync: s.syncDirFn, forget: s.making}
	f, fi, err := s.openAt(of.path, made, beforeCreate)
	for _, e := range made.durable {
		s.remember(e.entry, of.path, fi, e.since)
	}
	s.mustSync(of, made.unsynced...)
	if err == nil {
		s.mustSync(of, s.undurable(of.path, fi)...)
	}
	return f, fi, err
}

// openAt opens the file at path inside the template's base (openInside),
// passing the entries it makes to made, and returns it with its identity.
func (s *Sink) openAt(path string, made *newEntries, beforeCreate func() error) (*os.File, os.FileInfo, error) {
	f, err := openInside(s.tmpl.base, path, made, beforeCreate)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("stat %s: %w", path, err)
	}
	return f, fi, nil
}

// openFirst opens of's file for the sink's first use of its path, calling
// BeforeCreate first when the file is not there. Only of.mu is held: the
// hook (the sealer) may take the file's flock, and other writers of the
// path wait on of.mu until the file is open.
func (s *Sink) openFirst(ctx context.Context, of *openFile) (*os.File, os.FileInfo, error) {
	if s.beforeCreate == nil {
		return s.open(of, nil)
	}
	return s.open(of, func() error { return s.beforeCreate(ctx, of.path) })
}

// reopen replaces of's descriptor with one for the file at of.path
// (creating it as a first open would). Called with of.mu held and a
// reference on of, so nothing else closes or uses the old descriptor.
func (s *Sink) reopen(of *openFile) error {
	f, fi, err := s.open(of, nil)
	if err != nil {
		return err
	}
	// Another process may have rotated the path: the next rotation lists
	// its segments.
	s.replaceFile(of, f, fi, Segment{})
	return nil
}

// opened tells OnOpened of of's file.
func (s *Sink) opened(of *openFile) {
	if s.onOpened != nil {
		s.onOpened(of.path, of.ident)
	}
}

// replaceFile puts f, whose identity is fi, in place of of's descriptor,
// with made the segment of path a rotation made just before opening it
// (Seq 0: none). Called with of.mu held and a reference on of. A cut
// found in the old file (of.cut) left with it.
func (s *Sink) replaceFile(of *openFile, f *os.File, fi os.FileInfo, made Segment) {
	old := of.f
	of.f, of.ident, of.end, of.made, of.opened, of.cut = f, fi, -1, made, time.Now(), false
	s.opened(of)
	if err := old.Close(); err != nil {
		// Like an evicted file's: reported by Close, not by this write,
		// whose lines go to the new file regardless.
		s.mu.Lock()
		s.errs = append(s.errs, fmt.Errorf("close replaced %s: %w", of.path, err))
		s.mu.Unlock()
	}
}

// repairTail cuts off a torn last line of of's file f, left by a writer
// that died mid-write or by a cut (see cutBack), so it cannot swallow the
// next line, and returns the file's new size (see fsutil.CutTornTail;
// Options.OnTornTail is told). Called with the file's size. When the size
// is still of.end, the size our own last append to this file left (ending
// in a newline), the read is skipped: other writers only append (a torn
// line would have grown the file) or cut back to a size they saw, which is
// at or past our end. Without the lock (locked false) the line is closed
// with a newline instead (fsutil.CloseTornTail): its writer may still be
// writing it.
func (s *Sink) repairTail(of *openFile, f *os.File, size int64, locked bool) (int64, error) {
	site := TornInAuditFile
	if of.cut {
		site, of.cut = TornAfterCutBack, false
	}
	if size == 0 || size == of.end {
		return size, nil
	}
	repair := fsutil.CutTornTail
	if !locked {
		repair = fsutil.CloseTornTail
	}
	// Opened O_RDWR, not write-only, so that the tail can be read.
	size, torn, err := repair(f, f.Name(), size, func(b []byte) error { return s.writeAll(f, b) })
	if torn.Bytes > 0 && s.onTornTail != nil {
		s.onTornTail(f.Name(), torn, site)
	}
	return size, err
}

// writeAll loops over short writes; with O_APPEND each chunk lands at the
// end of the file, and the caller's lock keeps other writers out meanwhile.
func (s *Sink) writeAll(f *os.File, b []byte) error {
	for len(b) > 0 {
		n, err := s.writeFn(f, b)
		b = b[n:]
		if err != nil {
			return fmt.Errorf("write %s (%d bytes left): %w", f.Name(), len(b), err)
		}
		if n == 0 {
			return fmt.Errorf("write %s (%d bytes left): %w", f.Name(), len(b), io.ErrShortWrite)
		}
	}
	return nil
}

// Close closes every cached file. Writes still in flight finish and close
// their file when they return; later writes fail with ErrClosed.
func (s *Sink) Close() error {
	// Before the lock: a retention step may be waiting for the sealer,
	// which may be waiting for a writer that needs the lock to finish.
	s.maint.stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	for _, of := range s.files {
		if of.refs == 0 {
			s.dropLocked(of)
		}
	}
	s.wakeLocked()
	return errors.Join(s.errs...)
}

// acquire returns the cached entry for path with a reference held, opening
// the file if needed. When the cache is full of busy entries it waits.
func (s *Sink) acquire(ctx context.Context, path string) (*openFile, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, ErrClosed
		}
		if of := s.files[path]; of != nil {
			of.refs++
			s.lru.MoveToFront(of.elem)
			s.mu.Unlock()
			return of, nil
		}
		if len(s.files) >= s.max && !s.evictLocked() {
			s.waiting++
			wake := s.wake
			s.mu.Unlock()
			select {
			case <-wake:
			case <-ctx.Done():
			}
			s.mu.Lock()
			s.waiting--
			s.mu.Unlock()
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("waiting for a free file slot for %s: %w", path, err)
			}
			continue
		}
		of := &openFile{path: path, refs: 1, end: -1}
		of.mu.Lock() // others wait on it until the file is open
		of.elem = s.lru.PushFront(of)
		s.files[path] = of
		s.mu.Unlock()

		of.f, of.ident, of.err = s.openFirst(ctx, of)
		of.opened = time.Now()
		if of.err == nil {
			s.countOpen()
			s.opened(of)
			if s.rot != nil {
				of.since = s.rot.segmentBegan(of.f, of.ident.Size())
				s.maint.schedule(path)
			}
		} else {
			s.mu.Lock()
			s.dropLocked(of)
			s.wakeLocked()
			s.mu.Unlock()
		}
		of.mu.Unlock()
		return of, nil
	}
}

func (s *Sink) release(of *openFile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	of.refs--
	if of.refs > 0 {
		return
	}
	if s.closed || s.files[of.path] != of {
		s.dropLocked(of)
	}
	s.wakeLocked()
}

// evictLocked closes the least recently used idle file; false if all busy.
func (s *Sink) evictLocked() bool {
	for e := s.lru.Back(); e != nil; e = e.Prev() {
		if of := e.Value.(*openFile); of.refs == 0 {
			s.dropLocked(of)
			return true
		}
	}
	return false
}

// dropLocked removes of from the cache and closes its file if nobody uses it.
func (s *Sink) dropLocked(of *openFile) {
	if s.files[of.path] == of {
		delete(s.files, of.path)
		s.lru.Remove(of.elem)
		s.forgetMark(of.path)
	}
	if of.refs == 0 && of.f != nil {
		s.live.Add(-1)
		if err := of.f.Close(); err != nil {
			s.errs = append(s.errs, fmt.Errorf("close %s: %w", of.path, err))
		}
		of.f = nil
	}
}

// maxDurable bounds Sink.durable, a path and an identity per entry: a
// few MiB, where a {session_id} path's files would otherwise grow it for
// the process's life.
const maxDurable = 1 << 14

// remadeBuckets sizes Sink.remade: an entry made while a sync of another
// in its bucket is under way costs that other's next open a sync.
const remadeBuckets = 1024

// forgetIfClosed drops path's own mark unless its file is in the cache:
// a writer raises it only while it holds the file there.
func (s *Sink) forgetIfClosed(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files[path] == nil {
		s.forgetMark(path)
	}
}

// forgetMark drops a templated path's own mark (see ownMarks.forget); a
// plain path's is one, kept for the sink's life, so that its first
// rotation after a start already knows the log's newest segment.
func (s *Sink) forgetMark(path string) {
	if s.marks != nil && s.tmpl.static == "" {
		s.marks.forget(path)
	}
}

func (s *Sink) countOpen() {
	n := s.live.Add(1)
	for {
		p := s.peak.Load()
		if n <= p || s.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (s *Sink) wakeLocked() {
	if s.waiting > 0 {
		close(s.wake)
		s.wake = make(chan struct{})
	}
}
