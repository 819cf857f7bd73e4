package filesink

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// noFollowFlag refuses a symlink in a segment's or a temp file's place.
const noFollowFlag = unix.O_NOFOLLOW

// maintainer compresses closed segments and applies retention, one path
// at a time on its own goroutine, off the writers' path. A path is
// scheduled at each rotation and when the sink first opens it, so a
// compression cut short by a crash is finished after a restart.
type maintainer struct {
	rot   *Rotation
	marks *ownMarks
	// idle rotates the files whose Rotation.Interval ran out and returns
	// how long until the next is due; nil without an interval.
	idle func(context.Context) time.Duration
	// forget drops a path's mark unless the sink holds its file open;
	// nil keeps every mark.
	forget func(path string)
	// zc is the loop's compressor, reused from segment to segment.
	zc compressor
	// onTornTail is Options.OnTornTail.
	onTornTail func(path string, torn fsutil.TornTail, site TornSite)
	// differing holds the plain segments found to differ from their
	// compressed copies, with what both files were then: one is reported
	// again (and read again) only once either file changes. Only the loop
	// uses it.
	differing map[string]twinStamp
	// retry is, per path, the wait after its last failed compression.
	retry map[string]time.Duration
	// readDir lists a directory for segments and kept torn lines; nil is
	// os.ReadDir (a test counts the listings).
	readDir func(string) ([]os.DirEntry, error)
	// unremoved holds, per path and file, a removal of a segment's file
	// that failed (see removeFile): the same failure is reported once, not
	// each round. Only the loop uses it.
	unremoved map[string]map[string]removalFailure
	// pass counts maintain's looks at a path, so that a failure reported
	// by one step of a look is told from one reported by an earlier look.
	pass uint64
	// stopped holds the paths whose retention stopped at a segment.
	stopped stopped
	// unlink is os.Remove; a test makes it fail for a file (as on a file
	// made immutable).
	unlink func(string) error
	// after runs f once d has passed and returns what stops it; nil is
	// time.AfterFunc (a test holds the looks again itself).
	after func(d time.Duration, f func()) (stop func() bool)
	// later stops each path's pending look again: a round looks at all
	// of a path's segments, so its look again replaces the one before
	// rather than adding a chain of them per rotation. Only the loop
	// uses it, and stop once the loop is done.
	later map[string]func() bool

	mu     sync.Mutex
	queued map[string]bool
	order  []string
	wake   chan struct{}

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

func newMaintainer(r *Rotation, marks *ownMarks, idle func(context.Context) time.Duration, forget func(string), onTornTail func(string, fsutil.TornTail, TornSite)) *maintainer {
	ctx, cancel := context.WithCancel(context.Background())
	m := &maintainer{rot: r, marks: marks, idle: idle, forget: forget, onTornTail: onTornTail, readDir: r.maintReadDir, queued: map[string]bool{}, wake: make(chan struct{}, 1), ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go m.loop()
	return m
}

// schedule asks for path's segments to be looked after; nil-safe.
func (m *maintainer) schedule(path string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	if !m.queued[path] {
		m.queued[path] = true
		m.order = append(m.order, path)
	}
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// stop ends the loop; a compression in progress is abandoned (its temp
// file removed) and done at the next start.
func (m *maintainer) stop() {
	if m == nil {
		return
	}
	m.cancel()
	<-m.done
	for _, stop := range m.later {
		stop()
	}
}

func (m *maintainer) loop() {
	defer close(m.done)
	// The interval timer rotates a file on time even when no batch comes
	// (a batch rotates it too, whichever is first).
	var tick <-chan time.Time
	var timer *time.Timer
	if m.idle != nil {
		// The first look comes soon: a file's segment may have run out
		// while the collector was stopped.
		timer = time.NewTimer(m.rot.idleWait(0))
		defer timer.Stop()
		tick = timer.C
	}
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-m.wake:
		case <-tick:
			timer.Reset(m.rot.idleWait(m.idle(m.ctx)))
		}
		for paths := m.takeQueued(); len(paths) > 0; paths = m.takeQueued() {
			if !m.round(paths) {
				return
			}
		}
	}
}

// takeQueued returns the paths scheduled so far, in order, and empties
// the queue.
func (m *maintainer) takeQueued() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	paths := m.order
	m.order = nil
	clear(m.queued)
	return paths
}

// round looks after paths with one listing per directory (see
// dirListing); false when the maintainer stops. A path scheduled during
// the round is looked after in the next, with a listing of its own.
func (m *maintainer) round(paths []string) bool {
	l := newListings(m.readDir)
	for _, path := range paths {
		if m.ctx.Err() != nil {
			return false
		}
		m.lookAgain(path, m.maintain(m.ctx, path, l))
	}
	m.remind(m.rot.clock()) // once all of the round's paths are seen
	return true
}

// lookAgain schedules path once d has passed, in place of its pending
// look again; d 0 leaves it none.
func (m *maintainer) lookAgain(path string, d time.Duration) {
	if stop := m.later[path]; stop != nil {
		stop()
		delete(m.later, path)
	}
	if d <= 0 {
		return
	}
	after := m.after
	if after == nil {
		after = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	if m.later == nil {
		m.later = map[string]func() bool{}
	}
	m.later[path] = after(d, func() { m.schedule(path) })
}

// maintain compresses path's closed segments and applies retention, from
// the listing l. It returns when to look again (a segment too fresh to
// compress), or 0.
func (m *maintainer) maintain(ctx context.Context, path string, l *listings) time.Duration {
	r := m.rot
	m.pass++
	segs, err := l.segments(path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			r.fail(path, err)
			// A path looked at again for a failure stays so: a stopped
			// retention may see no rotation again.
			if _, retrying := m.retry[path]; retrying {
				return m.retryAfter(path, true)
			}
		} else { // its directory is gone
			m.retentionRan(path)
			delete(m.retry, path)
		}
		return 0
	}
	// A rotation named after the segment it made last lists nothing: a
	// file named as a segment put beside them since is found here.
	foreign := foreignAhead(segs, r.clock(), m.marks.get(path))
	r.noteForeign(m.marks, path, segs, foreign)
	m.marks.listed(path, segs, foreign)
	var again time.Duration
	failed := false
	if r.Compress {
		segs, again, failed = m.compressAll(ctx, path, segs, l.tornOf(path))
	}
	// A stopped retention is looked at again as a failed compression is: a
	// segment made removable again, or sealed since BeforeRemove refused
	// it, goes without waiting for a rotation, which a finished
	// {session_id} file never gets.
	if err := m.retainSegs(path, segs, l.tornOf(path)); err != nil {
		failed = true
	}
	if retry := m.retryAfter(path, failed); retry > 0 && (again == 0 || retry < again) {
		again = retry
	}
	if m.forget != nil {
		m.forget(path) // Holds raised it for a file that may be closed
	}
	return again
}

// compressAll compresses path's closed segments but those not the log's,
// and returns them as they are now, with when to look again (0: never)
// and whether a compression failed. A torn line cut off one makes torn's
// listing stale.
func (m *maintainer) compressAll(ctx context.Context, path string, segs []Segment, torn *tornKept) ([]Segment, time.Duration, bool) {
	r := m.rot
	onTorn := func(p string, tt fsutil.TornTail) {
		torn.stale = true
		if m.onTornTail != nil {
			m.onTornTail(p, tt, TornInSegment)
		}
	}
	var again time.Duration
	failed := false
	notOurs := m.notTheLogs(path, segs)
	now := segs[:0:0]
	for i, seg := range segs {
		if notOurs[i] {
			now = append(now, seg)
			continue // retention leaves it too, and says so
		}
		if seg.Compressed {
			m.dropPlainTwin(path, seg)
			now = append(now, seg)
			continue
		}
		wait, err := compressSegment(ctx, &m.zc, seg, r.clock(), r.grace, onTorn)
		if err != nil && ctx.Err() == nil {
			r.fail(path, err)
			failed = true
		}
		if wait > 0 && (again == 0 || wait < again) {
			again = wait
		}
		if seg, ok := segmentNow(seg); ok {
			now = append(now, seg)
		}
	}
	return now, again, failed
}

// segmentNow is seg as it is on disk after a compression step: compressed
// once its .zst is there, plain while it is not, gone when neither is.
func segmentNow(seg Segment) (Segment, bool) {
	if _, err := os.Lstat(seg.Plain + ZstdSuffix); err == nil {
		seg.Path, seg.Compressed = seg.Plain+ZstdSuffix, true
		return seg, true
	}
	_, err := os.Lstat(seg.Plain)
	return seg, err == nil
}

// notTheLogs says which segments are not the log's, as retention tells
// them: dated ahead of the log, or (with Holds) not recorded yet sorting
// before one that is. Compression leaves those files as they were put.
func (m *maintainer) notTheLogs(path string, segs []Segment) []bool {
	out := foreignAhead(segs, m.rot.clock(), m.marks.get(path))
	if m.rot.Holds == nil {
		return out
	}
	recorded := m.recorded(path, segs)
	last := -1
	for i, r := range recorded {
		if r {
			last = i
		}
	}
	for i := range segs {
		out[i] = out[i] || !recorded[i] && i < last
	}
	return out
}

// dropPlainTwin removes a plain segment whose compressed copy was made
// durable before a crash stopped the removal. One whose bytes differ from
// the copy's is kept, reported: one of them was changed.
func (m *maintainer) dropPlainTwin(path string, seg Segment) {
	if _, err := os.Lstat(seg.Plain); err != nil {
		return
	}
	stamp := stampTwin(seg)
	if prev, ok := m.differing[seg.Plain]; ok && prev == stamp {
		return
	}
	// A pair found the same before, whose removal failed, is not read again.
	if prev, ok := m.unremoved[path][seg.Plain]; (!ok || prev.stamp != stamp) && !m.sameTwin(path, seg, stamp) {
		return
	}
	delete(m.differing, seg.Plain)
	if err := m.removeFile(path, seg, seg.Plain, "remove the plain copy of a compressed segment"); err != nil {
		return
	}
	_ = os.Remove(seg.Plain + ZstdSuffix + tmpSuffix)
	if err := fsutil.SyncDir(filepath.Dir(seg.Plain)); err != nil {
		m.rot.fail(path, fmt.Errorf("sync directory of %s: %w", seg.Plain, err))
	}
}

// sameTwin compares seg's plain file with its compressed copy, stamped
// stamp; a difference or a failed comparison is reported, false.
func (m *maintainer) sameTwin(path string, seg Segment, stamp twinStamp) bool {
	switch same, err := SameAsCompressed(seg.Plain, seg.Path); {
	case err != nil:
		m.rot.fail(path, fmt.Errorf("compare plain segment %s with its compressed copy: %w", seg.Plain, err))
		return false
	case !same:
		if m.differing == nil {
			m.differing = map[string]twinStamp{}
		}
		m.differing[seg.Plain] = stamp
		m.rot.fail(path, fmt.Errorf("plain segment %s differs from its compressed copy %s: %w", seg.Plain, seg.Path, errTwinDiffers))
		return false
	}
	return true
}

// twinStamp is what a plain segment and its compressed copy were when
// compared: sizes and modification times.
type twinStamp struct {
	plainSize, zstSize int64
	plainTime, zstTime time.Time
}

func stampTwin(seg Segment) twinStamp {
	var st twinStamp
	if fi, err := os.Lstat(seg.Plain); err == nil {
		st.plainSize, st.plainTime = fi.Size(), fi.ModTime()
	}
	if fi, err := os.Lstat(seg.Path); err == nil {
		st.zstSize, st.zstTime = fi.Size(), fi.ModTime()
	}
	return st
}

// ErrForeignSegment is wrapped by a BeforeRemove error for a file named
// as a segment that is not one of the path's: retention passes over it.
var ErrForeignSegment = errors.New("a foreign or renamed segment")

// retainSegs removes the oldest of the log's segments beyond MaxBackups
// and those older than MaxAge, oldest first, from path's segments segs as
// a listing found them; torn is that listing's kept torn lines. A removal
// refused (BeforeRemove) or failed stops the round, so a newer segment
// never goes while an older stays: it returns what stopped it then (see
// retentionStopped), nil when it ran through. A foreign segment
// (ErrForeignSegment) is passed over and stays. With Holds, the torn lines
// are listed again at the first removal, after Holds was asked: a seal
// cuts a torn line off a segment before the log records it.
func (m *maintainer) retainSegs(path string, segs []Segment, torn *tornKept) error {
	r := m.rot
	recorded := m.recorded(path, segs)
	if r.MaxBackups == 0 && r.MaxAge == 0 {
		return nil
	}
	now := r.clock()
	// A segment dated ahead of the log is not the log's: it is passed over.
	foreign := foreignAhead(segs, now, m.marks.get(path))
	due := r.dueSegments(segs, foreign, recorded, now)
	if r.Holds != nil {
		torn = &tornKept{dir: filepath.Dir(path), readDir: m.readDir}
	}
	for k, d := range due {
		// A segment the log did not record when Holds was asked was sealed
		// since (BeforeRemove accepted it): the seal may have cut a torn
		// line off it after the listing.
		if r.Holds != nil && !recorded[d.i] {
			torn.stale = true
		}
		if err := m.removeSegment(path, segs[d.i], d.reason, torn); err != nil {
			m.retentionStopped(path, segs[d.i], err, len(due)-k, now)
			return err
		}
	}
	m.retentionRan(path)
	return nil
}

// dueSegment is a segment retention removes: its index, and why.
type dueSegment struct {
	i      int
	reason string
}

// dueSegments lists the segments of segs retention removes at now, oldest
// first, passing over the foreign ones.
func (r *Rotation) dueSegments(segs []Segment, foreign, recorded []bool, now time.Time) []dueSegment {
	held, excess := r.heldSegments(foreign, recorded)
	var due []dueSegment
	for i, seg := range segs {
		if foreign[i] {
			continue
		}
		reason := r.removalReason(seg, excess, now)
		if reason == "" {
			break
		}
		if held[i] {
			excess--
		}
		due = append(due, dueSegment{i: i, reason: reason})
	}
	return due
}

// heldSegments says which segments count toward MaxBackups, and by how
// many they exceed it. Only the log's own segments (Holds) count, so
// files put beside them cannot push them out; the newest counts too, as
// it may be a rotation the log has not recorded yet.
func (r *Rotation) heldSegments(foreign, recorded []bool) (held []bool, excess int) {
	newest := newestOwn(foreign)
	held = make([]bool, len(foreign))
	excess = -r.MaxBackups
	for i := range foreign {
		held[i] = !foreign[i] && (r.Holds == nil || i == newest || recorded[i])
		if held[i] {
			excess++
		}
	}
	return held, excess
}

// removalReason is why seg goes (RemovedMaxBackups or RemovedMaxAge) while
// the log's held segments exceed MaxBackups by excess; "" when it stays.
func (r *Rotation) removalReason(seg Segment, excess int, now time.Time) string {
	switch {
	case r.MaxBackups > 0 && excess > 0:
		return RemovedMaxBackups
	case r.MaxAge > 0 && now.Sub(seg.Time) > r.MaxAge:
		return RemovedMaxAge
	default:
		return ""
	}
}

// removeSegment removes seg for reason and returns what stops the round:
// a failed or refused removal, but for a foreign segment's, which is not
// the log's to remove; nil when it goes on.
func (m *maintainer) removeSegment(path string, seg Segment, reason string, torn *tornKept) error {
	if err := m.remove(path, seg, torn); err != nil {
		if !errors.As(err, new(reportedError)) {
			m.rot.fail(path, err)
		}
		if errors.Is(err, ErrForeignSegment) {
			return nil
		}
		return err
	}
	if m.rot.OnRemoved != nil {
		m.rot.OnRemoved(path, seg, reason)
	}
	return nil
}

// recorded asks Holds which segments the log records, and remembers the
// newest of them for naming (see ownMarks); all false without Holds.
func (m *maintainer) recorded(path string, segs []Segment) []bool {
	out := make([]bool, len(segs))
	if m.rot.Holds == nil {
		return out
	}
	for i, seg := range segs {
		if out[i] = m.rot.Holds(path, seg); out[i] {
			m.marks.raise(path, seg.Time)
		}
	}
	return out
}

// remove removes seg, its compressed copy's temp file and the torn lines
// kept for it (torn, listed once per retention pass). A plain twin goes
// before the compressed copy: when it cannot be removed (an immutable
// file), the pair stays whole, rather than a plain file compression would
// compress again each round.
func (m *maintainer) remove(path string, seg Segment, torn *tornKept) error {
	if m.rot.BeforeRemove != nil {
		if err := m.rot.BeforeRemove(path, seg); err != nil {
			return fmt.Errorf("retention kept %s: %w", filepath.Base(seg.Path), err)
		}
	}
	for _, p := range []string{seg.Plain, seg.Path, seg.Plain + ZstdSuffix + tmpSuffix} {
		if err := m.removeFile(path, seg, p, "retention: remove"); err != nil {
			return err
		}
	}
	if err := torn.remove(path, seg); err != nil {
		return err
	}
	if err := fsutil.SyncDir(filepath.Dir(seg.Path)); err != nil {
		return fmt.Errorf("retention: sync directory of %s: %w", seg.Path, err)
	}
	return nil
}

// reportedError is removeFile's error, reported already: in this look at
// the path, or in an earlier one (earlier), as the same failure on the
// same files.
type reportedError struct {
	error
	earlier bool
}

func (e reportedError) Unwrap() error { return e.error }

// removalFailure is a failed removal of a segment's file: the cause, the
// segment's files as they were then, and the pass that reported it.
type removalFailure struct {
	cause string
	stamp twinStamp
	pass  uint64
}

// removeFile removes p, a file of path's segment seg; what says which
// step does (the error's start). A failure is reported once: each round
// tries again, and the same cause on the same files (an immutable file, a
// read-only directory) is reported again only once either changes (a
// retention it stops is counted each round: see retentionStopped).
func (m *maintainer) removeFile(path string, seg Segment, p, what string) error {
	unlink := m.unlink
	if unlink == nil {
		unlink = os.Remove
	}
	err := unlink(p)
	if err == nil || errors.Is(err, os.ErrNotExist) {
		m.forgetUnremoved(path, p)
		return nil
	}
	// The cause without the path, which the error names once, in front.
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	f := removalFailure{cause: err.Error(), stamp: stampTwin(seg), pass: m.pass}
	err = fmt.Errorf("%s %s: %w", what, p, err)
	if prev, ok := m.unremoved[path][p]; ok && prev.cause == f.cause && prev.stamp == f.stamp {
		return reportedError{error: err, earlier: prev.pass != m.pass}
	}
	if m.unremoved == nil {
		m.unremoved = map[string]map[string]removalFailure{}
	}
	if m.unremoved[path] == nil {
		m.unremoved[path] = map[string]removalFailure{}
	}
	m.unremoved[path][p] = f
	m.rot.fail(path, err)
	return reportedError{error: err}
}

// forgetUnremoved drops the failed removal of path's file p, and path's
// entry with its last one.
func (m *maintainer) forgetUnremoved(path, p string) {
	delete(m.unremoved[path], p)
	if len(m.unremoved[path]) == 0 {
		delete(m.unremoved, path)
	}
}

// openSegment opens a plain segment to compress, read-write so that a torn
// last line can be cut off it, or read-only (writable false) when it is
// not ours to write.
func openSegment(name string) (f *os.File, writable bool, err error) {
	f, err = os.OpenFile(name, os.O_RDWR|noFollowFlag, 0)
	if errors.Is(err, os.ErrPermission) || errors.Is(err, unix.EROFS) {
		f, err = os.OpenFile(name, os.O_RDONLY|noFollowFlag, 0)
		return f, false, err
	}
	return f, err == nil, err
}

// cutSegmentTail cuts a torn last line off in, a plain segment size bytes
// long, under the writers' lock (fsutil.CutTornTail), and makes the cut
// durable before the compressed copy is: a plain twin left by a crash must
// match it (see dropPlainTwin).
func cutSegmentTail(in *os.File, size int64, onTorn func(string, fsutil.TornTail)) error {
	write := func(b []byte) error { _, err := in.WriteAt(b, size); return err }
	_, torn, err := fsutil.CutTornTail(in, in.Name(), size, write)
	if torn.Bytes == 0 || err != nil {
		return err
	}
	if onTorn != nil {
		onTorn(in.Name(), torn)
	}
	if err := in.Sync(); err != nil {
		return fmt.Errorf("sync after cutting its torn last line: %w", err)
	}
	return nil
}

// tornKept is the torn lines kept aside (fsutil.CutTornTail) in a
// directory, by the file each was cut off. Retention lists it once per
// pass, at its first removal (after Holds was asked: a seal's cut comes
// before its record), not once per segment it removes.
type tornKept struct {
	dir     string
	readDir func(string) ([]os.DirEntry, error)
	byFile  map[string][]tornLine // nil until listed
	stale   bool                  // list again before the next removal
}

// tornLine is one kept torn line: its file's name and when it was cut.
type tornLine struct {
	name string
	at   time.Time
}

// list reads the directory into byFile.
func (k *tornKept) list() error {
	read := k.readDir
	if read == nil {
		read = os.ReadDir
	}
	ents, err := read(k.dir)
	if err != nil {
		return fmt.Errorf("retention: list %s: %w", k.dir, err)
	}
	k.fill(ents)
	return nil
}

// fill takes the kept torn lines of a listing of the directory.
func (k *tornKept) fill(ents []os.DirEntry) {
	k.byFile, k.stale = map[string][]tornLine{}, false
	for _, e := range ents {
		file, at, ok := fsutil.ParseTornKept(e.Name())
		if ok && e.Type().IsRegular() {
			k.byFile[file] = append(k.byFile[file], tornLine{name: e.Name(), at: at})
		}
	}
}

// remove removes the torn lines kept for seg or an older segment of path:
// seg's own, and the active file's cut before seg was closed. seg.Time is
// in whole seconds, so a line cut in its last second stays rather than one
// of the next segment's go.
func (k *tornKept) remove(path string, seg Segment) error {
	if k.byFile == nil || k.stale {
		if err := k.list(); err != nil {
			return err
		}
	}
	own := filepath.Base(seg.Plain)
	if err := k.removeLines(own, func(tornLine) bool { return true }); err != nil {
		return err
	}
	return k.removeLines(filepath.Base(path), func(l tornLine) bool { return l.at.Before(seg.Time) })
}

// removeLines removes file's kept torn lines that match, and forgets them.
func (k *tornKept) removeLines(file string, match func(tornLine) bool) error {
	var left []tornLine
	for _, l := range k.byFile[file] {
		if !match(l) {
			left = append(left, l)
			continue
		}
		p := filepath.Join(k.dir, l.name)
		if kept, err := fsutil.IsTornKeptFile(p); err != nil || !kept {
			continue // another session's audit file named like one; forgotten too
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("retention: remove %s: %w", p, err) // ends the pass
		}
	}
	k.byFile[file] = left
	return nil
}

// compressSegment writes seg as a zstd frame beside it, durably (temp
// file, fsync, rename, fsync of the directory), then removes the plain
// file. It holds the writers' flock on the plain file meanwhile, and first
// cuts off a torn last line a writer that had the path open before the
// rotation left (see cutSegmentTail; onTorn is told). A segment written to
// or rotated within grace is left for later: it returns how long to wait.
func compressSegment(ctx context.Context, zc *compressor, seg Segment, now time.Time, grace time.Duration, onTorn func(string, fsutil.TornTail)) (time.Duration, error) {
	in, writable, err := openSegment(seg.Plain)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, nil // retention, or another sink, got there first
		}
		return 0, fmt.Errorf("compress %s: %w", seg.Plain, err)
	}
	defer func() { _ = in.Close() }()
	locked := true
	lctx, cancel := context.WithTimeout(ctx, idleLockWait)
	err = fsutil.Lock(lctx, int(in.Fd()))
	cancel()
	switch {
	case errors.Is(err, fsutil.ErrLockUnsupported):
		locked = false
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		// Another process holds it: the one goroutine that looks after
		// every file's segments does not wait for it.
		return max(grace, time.Second), nil
	case err != nil:
		return 0, fmt.Errorf("compress %s: lock: %w", seg.Plain, err)
	}
	defer fsutil.Unlock(int(in.Fd()))
	fi, err := in.Stat()
	if err != nil {
		return 0, fmt.Errorf("compress %s: %w", seg.Plain, err)
	}
	if wait := untilQuiet(fi, now, grace); wait > 0 {
		return wait, nil
	}
	if _, err := os.Lstat(seg.Plain); err != nil {
		return 0, nil // removed while we waited for the lock
	}
	if locked && writable {
		// Without the lock its writer may still be writing it: left as is.
		if err := cutSegmentTail(in, fi.Size(), onTorn); err != nil {
			return 0, fmt.Errorf("compress %s: %w", seg.Plain, err)
		}
	}
	dst := seg.Plain + ZstdSuffix
	if err := zc.write(ctx, in, dst); err != nil {
		return 0, fmt.Errorf("compress %s: %w", seg.Plain, err)
	}
	if zc.written != nil {
		zc.written(dst)
	}
	// Gone already: another collector on the path found the copy in place
	// and removed the plain twin (dropPlainTwin), as this one would.
	if err := os.Remove(seg.Plain); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("remove %s after compressing it: %w", seg.Plain, err)
	}
	if err := fsutil.SyncDir(filepath.Dir(seg.Plain)); err != nil {
		return 0, fmt.Errorf("sync directory of %s: %w", seg.Plain, err)
	}
	return 0, nil
}

// untilQuiet is how long to wait until the segment fi has been left alone
// for grace: since its last write, and since its rotation, whose rename
// sets the change time. A writer that opened the path just before the
// rename may still be waiting for the lock to append its line, however
// long the file was quiet before. A time ahead of the clock by more than
// grace was set before the clock went back: nothing came since.
func untilQuiet(fi os.FileInfo, now time.Time, grace time.Duration) time.Duration {
	times := []time.Time{fi.ModTime()}
	if changed, ok := changeTime(fi); ok {
		times = append(times, changed)
	}
	var wait time.Duration
	for _, t := range times {
		if quiet := now.Sub(t); quiet < grace && quiet > -grace {
			wait = max(wait, grace-quiet)
		}
	}
	return wait
}

// A path whose compression failed is looked at again after
// compressRetryMin, then at waits that double up to compressRetryMax: a
// full disk frees up long before the next rotation may come, and a
// failure that lasts is not logged every minute.
const (
	compressRetryMin = time.Minute
	compressRetryMax = time.Hour
)

// retryAfter is when path is looked at again after a round whose
// compression failed (failed) or not: 0 once it works.
func (m *maintainer) retryAfter(path string, failed bool) time.Duration {
	if !failed {
		delete(m.retry, path)
		return 0
	}
	if m.retry == nil {
		m.retry = map[string]time.Duration{}
	}
	d := min(max(2*m.retry[path], compressRetryMin), compressRetryMax)
	m.retry[path] = d
	return d
}
