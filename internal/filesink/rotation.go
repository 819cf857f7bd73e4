package filesink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/groupcommit"
)

// Retention reasons given to Rotation.OnRemoved.
const (
	RemovedMaxBackups = "max_backups"
	RemovedMaxAge     = "max_days"
)

// Rotation configures the sink's own rotation (Options.Rotation). A file
// is rotated under the writers' flock, before a batch and never inside
// one: it is renamed to its next segment name (see Segments) and the batch
// goes to a new file at the path, where a writer opening by path (the
// Python sink) goes on too.
type Rotation struct {
	// MaxBytes rotates a file before a batch that would take it past this
	// size (a file is never left empty: a batch larger than MaxBytes goes
	// whole into a file of its own); 0: no size limit.
	MaxBytes int64
	// Interval rotates a file this long after its segment began (its
	// first line in an empty file, the rotation before, or when this sink
	// opened it), at a batch or on a timer when none comes; 0: not by
	// time. The timer sees the files the sink holds open, and a plain
	// path's file from the start (an idle templated file it closed for
	// MaxOpenFiles rotates at its next batch).
	Interval time.Duration
	// MaxBackups keeps at most this many closed segments per file; 0: all.
	MaxBackups int
	// MaxAge removes closed segments older than this (by the time in their
	// name); 0: kept whatever their age.
	MaxAge time.Duration
	// Compress turns each closed segment into a zstd frame (.zst), off the
	// writers' path.
	Compress bool

	// OnRotate is told of each rotation, under the lock, after the rename
	// and before any line goes to the new file. It must be quick.
	OnRotate func(path, segment string)
	// BeforeRemove, when set, must accept a removal by retention before it
	// happens (integrity records it); an error keeps the segment.
	BeforeRemove func(path string, seg Segment) error
	// Holds, when set, says whether seg is one of the closed segments of
	// path's log (integrity records them): only those, and the newest
	// segment, count toward MaxBackups, so files put beside them cannot
	// push the log's own out; the newest it records also dates the log
	// for naming (AheadOfLog). It is never asked under the writers' flock.
	Holds func(path string, seg Segment) bool
	// OnRemoved is told of each segment retention removed, with the reason
	// (RemovedMaxBackups or RemovedMaxAge).
	OnRemoved func(path string, seg Segment, reason string)
	// OnIgnored is told, once per sink, of a file named as a segment of
	// path that naming and retention pass over (AheadOfLog).
	OnIgnored func(path string, seg Segment)
	// OnError is told of a rotation, compression or retention step that
	// failed; no segment is lost by one, and it is tried again later.
	OnError func(path string, err error)
	// OnStillStopped is told of each round in which path's retention
	// stops again at a failure OnError was told of in an earlier round
	// (a segment file that still cannot be removed), which OnError is not
	// told again.
	OnStillStopped func(path string)
	// OnRetentionStuck is told, at most once per stuckReminder (an hour)
	// for the whole sink, of the paths whose retention stays stopped, when
	// one of them stopped again since the last report: one summary rather
	// than a line per path, as a templated path makes thousands.
	OnRetentionStuck func(RetentionStuck)
	// OnRetentionResumed is told when a path whose retention had stopped
	// runs through a round again (or its segments are gone).
	OnRetentionResumed func(StoppedRetention)

	// now and grace are the clock and the quiet time a segment needs
	// before it is compressed; idlePoll, when set, is how often the
	// interval timer looks (for a clock tests move). Tests set them.
	now      func() time.Time
	grace    time.Duration
	idlePoll time.Duration
	// birth, when set, stands in for the file system's creation time
	// (a test whose clock is not the file system's sets it).
	birth func(*os.File) (time.Time, bool)
	// readDir, when set, lists a directory for a rotation's naming, and
	// renamed is called right after a rotation's rename, under the
	// directory's lock (tests count the listings and race a rotation).
	readDir func(string) ([]os.DirEntry, error)
	renamed func(path string)
	// maintReadDir, when set, lists a directory for compression and
	// retention (a test holds those listings back).
	maintReadDir func(string) ([]os.DirEntry, error)
	// lockWait, when set, stands in for dirLockWait.
	lockWait time.Duration
}

// idleWait bounds the interval timer's next wait: never a busy loop, and
// never longer than an interval, so a clock step is caught up with.
func (r *Rotation) idleWait(d time.Duration) time.Duration {
	if r.idlePoll > 0 {
		return r.idlePoll
	}
	floor := min(max(r.Interval/16, 10*time.Millisecond), time.Second)
	return min(max(d, floor), r.Interval)
}

// defaultCompressGrace is how long a closed segment must be left alone
// before it is compressed: a writer that opened the path just before the
// rotation may still be waiting for the lock to append its line there.
const defaultCompressGrace = time.Second

func (r *Rotation) validate() error {
	switch {
	case r.MaxBytes < 0:
		return fmt.Errorf("rotation max bytes must be >= 0, got %d", r.MaxBytes)
	case r.Interval < 0:
		return fmt.Errorf("rotation interval must be >= 0, got %s", r.Interval)
	case r.MaxBackups < 0:
		return fmt.Errorf("rotation max backups must be >= 0, got %d", r.MaxBackups)
	case r.MaxAge < 0:
		return fmt.Errorf("rotation max age must be >= 0, got %s", r.MaxAge)
	}
	return nil
}

func (r *Rotation) clock() time.Time {
	if r.now != nil {
		return r.now()
	}
	return time.Now()
}

// segmentBegan is when the segment in f began: now for an empty file,
// otherwise the file's creation time, since each segment is a file created
// by rotation. Counting from the open instead would let a collector that
// restarts (or a templated file evicted and reopened) more often than the
// interval never rotate.
func (r *Rotation) segmentBegan(f *os.File, size int64) time.Time {
	now := r.clock()
	if size == 0 {
		return now
	}
	birth := r.birth
	if birth == nil {
		birth = fileBirth
	}
	b, ok := birth(f)
	if !ok || b.After(now) {
		return now
	}
	return b
}

func (r *Rotation) fail(path string, err error) {
	if r.OnError != nil {
		r.OnError(path, err)
	}
}

// rotationDue reports whether the file, size bytes long, is rotated before
// group is appended.
func (s *Sink) rotationDue(of *openFile, size int64, group []*groupcommit.Batch) bool {
	r := s.rot
	if r == nil || size == 0 {
		return false
	}
	if r.MaxBytes > 0 {
		n := size
		for _, b := range group {
			n += int64(len(b.Data))
		}
		if n > r.MaxBytes {
			return true
		}
	}
	return r.Interval > 0 && r.clock().Sub(of.since) >= r.Interval
}

// rotateIdle rotates each open file whose interval ran out, as a batch
// would, and returns how long until the next is due.
func (s *Sink) rotateIdle(ctx context.Context) time.Duration {
	s.openPlainPath(ctx)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return s.rot.Interval
	}
	held := make([]*openFile, 0, len(s.files))
	for _, of := range s.files {
		of.refs++ // kept open meanwhile
		held = append(held, of)
	}
	s.mu.Unlock()
	next := s.rot.Interval
	for _, of := range held {
		// A stop ends the round: each rotation may wait for its
		// directory's lock, stop or not.
		if ctx.Err() == nil {
			next = min(next, s.rotateIfDue(ctx, of))
		}
		s.release(of)
	}
	return next
}

// openPlainPath opens a plain path's file that holds lines and that no
// write has opened yet (after a restart), so that the interval timer sees
// it: its segment may have run out while the collector was stopped.
func (s *Sink) openPlainPath(ctx context.Context) {
	path := s.tmpl.static
	if path == "" {
		return
	}
	s.mu.Lock()
	_, open := s.files[path]
	s.mu.Unlock()
	if open {
		return
	}
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return
	}
	if of, err := s.acquire(ctx, path); err == nil {
		s.release(of) // stays open, idle, as after a write
	}
}

// idleLockWait bounds the interval timer's wait for a file's flock: a
// process holding it long must not hold up the other files' rotation, nor
// the compression and retention behind the timer on its goroutine.
const idleLockWait = 100 * time.Millisecond

// rotateIfDue rotates of's file if its interval ran out, under of.mu (no
// batch meanwhile) and the writers' flock, and returns how long until it
// is due again. An empty file is not rotated: its segment begins now.
func (s *Sink) rotateIfDue(ctx context.Context, of *openFile) time.Duration {
	r := s.rot
	of.mu.Lock()
	defer of.mu.Unlock()
	if of.err != nil || of.f == nil {
		return r.Interval
	}
	if wait := r.Interval - r.clock().Sub(of.since); wait > 0 {
		return wait
	}
	lctx, cancel := context.WithTimeout(ctx, idleLockWait)
	f, size, locked, err := s.lockCurrent(lctx, of)
	cancel()
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return 0 // another process holds the lock: looked at again soon
	}
	if err == nil && size == 0 {
		of.since = r.clock()
	} else if err == nil {
		f, _, locked, err = s.rotateLocked(ctx, of, f, size, locked)
	}
	if err != nil {
		// A shutdown cut the wait short: a rename done stays, and the
		// next start opens the path and looks after its segments.
		if ctx.Err() == nil {
			r.fail(of.path, err)
		}
		return r.Interval
	}
	if locked {
		fsutil.Unlock(int(f.Fd()))
	}
	return r.Interval
}

// rotateLocked renames of's file, locked (when locked) and current, to its
// next segment name, and returns the new file at the path, locked, with
// its size. A rename that fails leaves the file where it is: the group is
// appended there and the failure reported, since rotation never costs a
// line. A directory sync that fails leaves the rename and the new file to
// syncEntries, which fails each batch (this group's first) until one
// succeeds.
func (s *Sink) rotateLocked(ctx context.Context, of *openFile, f *os.File, size int64, locked bool) (*os.File, int64, bool, error) {
	seg, next, err := s.renameToSegment(of)
	if seg.Seq == 0 {
		s.rot.fail(of.path, err)
		return f, size, locked, nil
	}
	if s.rot.OnRotate != nil {
		s.rot.OnRotate(of.path, seg.Plain)
	}
	if locked {
		fsutil.Unlock(int(f.Fd()))
	}
	of.since = s.rot.clock()
	// Moved away by us: lockCurrent reopens the path (when the rotation
	// did not) without telling OnReplaced.
	of.end = -1
	if next.f != nil {
		s.replaceFile(of, next.f, next.fi, seg)
	}
	s.maint.schedule(of.path)
	return s.lockCurrent(ctx, of)
}

// openedFile is a file a rotation opened at the path, with its identity.
type openedFile struct {
	f  *os.File
	fi os.FileInfo
}

// renameToSegment renames of's file at the path to its next segment name
// and makes the rename durable. It returns the segment made (Seq 0: not
// renamed, with the error) and, when no other rotation can have come
// between (see lockDir), the file it then opened at the path.
func (s *Sink) renameToSegment(of *openFile) (Segment, openedFile, error) {
	path := of.path
	// Named before the directory's lock: no other rotation of the path
	// can add a segment while this one holds the writers' flock on it.
	last, remembered, err := s.newestSegment(of)
	if err != nil {
		return Segment{}, openedFile{}, err
	}
	seg, next, err := s.renameAndOpen(of, last, remembered)
	if err != nil {
		return Segment{}, openedFile{}, err
	}
	s.marks.raise(path, seg.Time)
	s.marks.made(path, seg)
	if s.fsync == FsyncNever {
		return seg, next, nil // flushing is left to the kernel, as for the lines
	}
	// Another file at the path; only this writer looks its entry up.
	since := s.making(path)
	// One sync for the rename and the new file.
	dir := filepath.Dir(path)
	if err := s.syncDirFn(dir); err != nil {
		// The rename happened: the segment exists, only its durability
		// across a power loss is in doubt. So is the new file's at the
		// path, whoever makes it: no batch is acknowledged in it before
		// a sync succeeds.
		s.rot.fail(path, fmt.Errorf("sync directory after rotating %s: %w", path, err))
		s.mustSync(of, dir)
	} else if next.f != nil {
		s.remember(path, path, next.fi, since)
	}
	return seg, next, nil
}

// renameAndOpen renames of's file to the segment after last (renameNext)
// and, under the directory's lock (lockDir), opens the new file at the
// path.
func (s *Sink) renameAndOpen(of *openFile, last Segment, remembered bool) (Segment, openedFile, error) {
	unlock, locked := s.lockDir(filepath.Dir(of.path), s.rot.dirWait(of))
	defer unlock()
	renaming := time.Now()
	seg, err := s.renameNext(of.path, last, remembered)
	if err != nil || !locked {
		return seg, openedFile{}, err
	}
	next := s.openRotated(of.path)
	if next.f != nil && time.Since(renaming) >= s.rot.dirLockWait() {
		// Stalled this long under the lock, another rotation may have
		// given up waiting for it and rotated a file made at the path
		// since the rename: the next rotation lists.
		_ = next.f.Close()
		next = openedFile{}
	}
	return seg, next, nil
}

// nameTries bounds the names a rotation tries past one that is taken.
const nameTries = 8

// renameNext renames the file at path to the segment after last
// (remembered: the one this sink made last), passing over names taken.
func (s *Sink) renameNext(path string, last Segment, remembered bool) (Segment, error) {
	seg, err := s.renameAfter(path, last)
	for try := 0; errors.Is(err, unix.EEXIST) && try < nameTries; try++ {
		if remembered {
			// A file put there under the name: named after a listing.
			if last, err = s.listNewest(path); err != nil {
				return Segment{}, err
			}
			remembered = false
		} else {
			// Taken by what a listing passes over (a directory, a
			// symlink): the number after it.
			last = seg
		}
		seg, err = s.renameAfter(path, last)
	}
	return seg, err
}

// newestSegment is the log's newest own segment of of's path (Seq 0:
// none) and whether it is the one of's last rotation made (remembered):
// naming after it spares a listing of the directory under the writers'
// flock, which a {session_id} path fills with thousands of files.
func (s *Sink) newestSegment(of *openFile) (Segment, bool, error) {
	if of.made.Seq > 0 && !s.marks.takeStale(of.path) {
		return of.made, true, nil
	}
	last, err := s.listNewest(of.path)
	return last, false, err
}

// listNewest lists the directory for path's newest own segment.
func (s *Sink) listNewest(path string) (Segment, error) {
	readDir := s.rot.readDir
	if readDir == nil {
		readDir = readDirUnsorted
	}
	s.marks.takeStale(path) // this listing is newer
	segs, err := segmentsListed(path, readDir)
	if err != nil {
		return Segment{}, fmt.Errorf("rotate %s: %w", path, err)
	}
	// Under the writers' flock: the log's newest own segment is the one
	// remembered, not asked of Holds.
	foreign := foreignAhead(segs, s.rot.clock(), s.marks.get(path))
	s.rot.noteForeign(s.marks, path, segs, foreign)
	if i := newestOwn(foreign); i >= 0 {
		return segs[i], nil
	}
	return Segment{}, nil
}

// renameAfter renames the file at path to the segment after last (Seq 0:
// the first), which it returns, made or not. The rename fails if the name
// is taken.
func (s *Sink) renameAfter(path string, last Segment) (Segment, error) {
	now := s.rot.clock().UTC().Truncate(time.Second)
	if now.Before(last.Time) {
		now = last.Time
	}
	name := namerFor(path).name(now, last.Seq+1)
	seg := Segment{Path: name, Plain: name, Seq: last.Seq + 1, Time: now}
	if err := renameNoReplace(path, name); err != nil {
		return seg, fmt.Errorf("rotate %s to %s: %w", path, filepath.Base(name), err)
	}
	if s.rot.renamed != nil {
		s.rot.renamed(path)
	}
	return seg, nil
}

// openRotated opens the new file at path right after a rotation (made
// durable by the rotation's sync), or nothing when that fails: lockCurrent
// then reopens it, and reports. lockCurrent, which follows, also finds a
// file no longer at the path, as it does before every batch.
func (s *Sink) openRotated(path string) openedFile {
	f, fi, err := s.openAt(path, nil, nil)
	if err != nil {
		return openedFile{}
	}
	return openedFile{f: f, fi: fi}
}

// dirLockWait bounds a rotation's wait for its directory's lock, which
// another rotation holds only for a rename and an open.
const dirLockWait = time.Second

func (r *Rotation) dirLockWait() time.Duration {
	if r.lockWait > 0 {
		return r.lockWait
	}
	return dirLockWait
}

// dirWait is how long a rotation of of's file waits for the directory's
// lock before it goes on without it. Going on must not come between
// another rotation's rename and open: that one renamed before the file now
// at the path was made, so once this sink has had the file open for
// dirLockWait, one still between the two has taken that long and lists at
// its next rotation (renameToSegment). A try of idleLockWait is then
// enough, so a lock held by someone else costs the interval timer's round
// that much per file rather than a second.
func (r *Rotation) dirWait(of *openFile) time.Duration {
	full := r.dirLockWait()
	return min(full, max(full-time.Since(of.opened), idleLockWait))
}

// lockDir takes flock on dir for a rotation's rename and its open of the
// new file, which every rotation of a file in dir (this process's and
// another's) does under it. No other rotation of the path can then come
// between the two, so the segment made is known to be the newest while the
// file opened stays at the path. locked is false where the lock is not had
// within wait (dirWait), the wait for this sink's turn at it included: a
// file system without flock on a directory, or a process holding it (any
// local user who can read the directory can). The rotation then goes on,
// opens nothing, and the next one lists, so holding the lock delays a
// rotation and never stops it.
func (s *Sink) lockDir(dir string, wait time.Duration) (unlock func(), locked bool) {
	// Not cut short by the batch's context (a rotation takes none): one
	// that went on without the lock sooner could come between another's
	// rename and open, which that one only rules out by having been
	// quicker than dirLockWait. The wait for the turn counts: each
	// rotation of a {session_id} path's files would otherwise add its
	// wait to the next one's.
	lctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	select {
	case s.dirTurn <- struct{}{}:
	case <-lctx.Done():
		return func() {}, false
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == nil {
		if err = fsutil.Lock(lctx, fd); err != nil {
			_ = unix.Close(fd)
		}
	}
	if err != nil {
		<-s.dirTurn
		return func() {}, false
	}
	return func() {
		_ = unix.Close(fd) // lets the lock go
		<-s.dirTurn
	}, true
}

// renameNoReplace renames from to to, failing if to exists.
func renameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		// A file system without RENAME_NOREPLACE: link then unlink keeps
		// the promise (link fails on an existing name).
		if err = unix.Link(from, to); err == nil {
			err = unix.Unlink(from)
		}
	}
	return err
}
