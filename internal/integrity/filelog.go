package integrity

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/mod/sumdb/tlog"
	"golang.org/x/sys/unix"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
)

// fileLog is the sealer's memory of one audit file between seals. When the
// file, its store and its checkpoints are as it left them, a seal hashes only
// the new lines; otherwise (first seal in this process, file replaced,
// sidecar changed by someone else) it checks the whole file again.
type fileLog struct {
	path    string
	origin  string // for a new tree; see checkOrigin
	keys    *Keys
	scratch *storeScratch // the sealer's, shared by its files (one seal at a time)
	// syncAudit makes the audit file's lines durable (Settings.syncAudit).
	syncAudit func(*os.File) error
	// rotation asks the sealer about the sink's reported rotations
	// (Sealer.rotation); nil in tests that make a fileLog directly.
	rotation func(name string, done bool) (tracked, reported bool)
	// reported lists the segments the sink reported and the sealer has
	// not recorded (Sealer.reportedRotations); nil with rotation.
	reported func() []string
	// rotatedByOther records that another writer of the path rotated the
	// file sealed last to the segment named name (Sealer.RotatedByOther);
	// nil with rotation.
	rotatedByOther func(name string)
	// sinkFile is the file the sink opened at the path last
	// (Sealer.Opened), or nil; nil with rotation.
	sinkFile func() os.FileInfo

	known    bool
	dev, ino uint64
	// held keeps the file dev and ino name open: a removed file's inode
	// number is given to the next new file (ext4 does at once), which
	// would then pass for the file sealed last.
	held *os.File
	// prevHeld is the file held before, kept through the seal that found
	// another file at the path: rotated by another writer of the path, it
	// is known by it (rotatedBySink).
	prevHeld *os.File
	// beforeActive runs as a seal turns to the active file
	// (Settings.beforeActive); nil but in tests.
	beforeActive func()
	off          int64 // audit file bytes sealed
	storeSize    int64
	cpSize       int64
	last         Checkpoint
	hasLast      bool
	// sealedDev and sealedIno name the file the last good seal was of:
	// the one whose history the sidecars held (see renewed).
	sealedDev, sealedIno uint64
	// signed is the newest checkpoint this process read or wrote for the
	// file now at the path (reset when it is replaced): a reload of the
	// sidecar must still reach it, or someone removed signed history.
	signed    Checkpoint
	hasSigned bool
	// ownTear is the sidecar offset where an append of ours failed and
	// could not be cut back (-1: none): a torn record there is ours.
	ownTear int64
	// owner is the path's owner lock, held from the first seal until the
	// sealer closes or forgets the file.
	owner *OwnerLock

	// broken is the tampering found; the file is not sealed again in this
	// process.
	broken error
	// replaced is what the sink found of the file it was writing: moved
	// away, replaced or cut back (size 0: nothing since the last seal).
	replaced loss
	// lastErr is the error the last seal logged, if it failed.
	lastErr string
	// repairsLogged are the repairs logged since the last seal that
	// succeeded.
	repairsLogged []string
	// opened is set once a seal got as far as the sidecars.
	opened bool
	// repairs are the repairs of the seal running, for its result.
	repairs []string

	// first is the leaf index of the active file's first line: the lines
	// of the closed segments in segLog come before it. segSize is the
	// bytes of the segments sidecar read.
	first   int64
	segLog  *SegmentLog
	segSize int64

	// mark is how far the store is checked (see storeMark); nil: walk
	// it from its first hash. walkedStore: a walk of the seal running
	// checked the store.
	mark        *storeMark
	walkedStore bool
	// walked counts the store hashes the walks read, for the tests.
	walked int64
}

// sealResult is what one seal did.
type sealResult struct {
	lines      int64  // new leaves
	checkpoint []byte // the signed note appended, or nil
	repaired   []string
	// unsigned is how many lines the store had hashed when no checkpoint
	// signed any: sealing starts afresh over them.
	unsigned int64
	// renewed: a file refused before was replaced and its sidecars are
	// gone, so sealing started a new tree.
	renewed bool
	// newLog: this seal signed a log's first checkpoint.
	newLog string
	// rebuilt is set when a store found cut short, below the newest
	// checkpoint, was rebuilt from the file.
	rebuilt *storeRebuild
}

// storeRebuild is what a rebuild of a store cut short held and wrote.
type storeRebuild struct {
	store                       string
	heldHashes, heldLines       int64
	rebuiltHashes, rebuiltLines int64
}

// seal brings the store up to the file's current end and appends a signed
// checkpoint when the tree grew, or, with open, when the log has none.
func (l *fileLog) seal(ctx context.Context, open bool) (sealResult, error) {
	renewed := false
	if l.replaced.size > 0 {
		l.broken = l.movedAway()
	}
	if l.broken != nil {
		if !l.renewed() {
			return sealResult{}, l.broken
		}
		// A rotation caught half done (the file moved, its sidecars not
		// yet) must not stop sealing for good once it is complete.
		l.broken, l.known, l.hasSigned, renewed = nil, false, false, true
	}
	res, err := l.sealOnce(ctx, open)
	res.repaired, l.repairs = append(res.repaired, l.repairs...), nil
	res.renewed = renewed
	if err != nil {
		l.mark = nil // what the seal left in the store is checked again
	}
	if errors.Is(err, ErrTampered) {
		l.broken = err
	}
	return res, err
}

// sealOnce is one seal: the closed segments first, then the active file.
func (l *fileLog) sealOnce(ctx context.Context, open bool) (sealResult, error) {
	var res sealResult
	if _, err := os.Lstat(l.path); errors.Is(err, os.ErrNotExist) && !l.hasSegments() {
		if done, err := l.withoutFile(open); done {
			return res, err
		}
	}
	if l.known && !l.pathIsSealedFile() {
		// Replaced or rotated: the sidecars are read again too.
		l.known = false
	}

	store, err := l.openSealStore(&res)
	if err != nil {
		return res, err
	}
	defer func() { _ = store.close() }()
	if err := l.checkHandoverRecord(store); err != nil {
		return res, err
	}
	cps, err := l.openCheckpoints(store, &res)
	if err != nil {
		return res, err
	}
	defer func() { _ = cps.Close() }()

	// The closed segments first: their lines come before the active
	// file's in the log.
	if err := l.sealSegments(ctx, store, cps, &res); err != nil {
		return res, err
	}
	// Not returned in one statement with res: the call fills res, and
	// the order of the two is not specified.
	err = l.sealActive(ctx, store, cps, open, &res)
	return res, err
}

// openSealStore opens the hash store for a seal and starts the seal's
// walk of it. A store cut back, or changed since the last seal, makes
// the seal check everything again.
func (l *fileLog) openSealStore(res *sealResult) (*hashStore, error) {
	store, cut, err := openStore(StorePath(l.path), l.scratch)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.path, err)
	}
	if cut {
		res.repaired = append(res.repaired, "cut a torn hash store tail back; its records are hashed again from the file")
		l.known = false
	}
	if l.known && store.size() != l.storeSize {
		l.known = false // changed behind our back: check everything
	}
	l.startSeal(store)
	return store, nil
}

// openCheckpoints opens the checkpoints sidecar and reads it; the caller
// closes the file it returns.
func (l *fileLog) openCheckpoints(store *hashStore, res *sealResult) (*os.File, error) {
	cps, err := openNoFollow(CheckpointsPath(l.path), os.O_RDWR|os.O_CREATE|os.O_APPEND|noFollow, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open checkpoints of %s: %w", l.path, err)
	}
	if err := l.loadCheckpoints(cps, res); err != nil {
		_ = cps.Close()
		return nil, err
	}
	if !l.opened && !l.hasLast {
		res.unsigned = store.n // found so: not a first seal of ours that failed
	}
	l.opened = true
	return cps, nil
}

// sealActive hashes the active file's new lines under its lock and signs
// them. Without an active file (rotated, nothing written since) every
// leaf is in a segment.
func (l *fileLog) sealActive(ctx context.Context, store *hashStore, cps *os.File, open bool, res *sealResult) error {
	if l.beforeActive != nil {
		l.beforeActive()
	}
	defer l.forgetPrevious()
	audit, err := openNoFollow(l.path, os.O_RDWR|os.O_APPEND|noFollow, 0)
	if errors.Is(err, os.ErrNotExist) {
		return l.finishWithoutActive(store, cps, open, res)
	}
	if err != nil {
		return err // the *PathError names the file
	}
	defer func() { _ = audit.Close() }()

	was := [2]uint64{l.dev, l.ino}
	size, torn, err := l.lockedSize(ctx, audit)
	if err != nil {
		return err
	}
	if (was != [2]uint64{l.dev, l.ino}) && l.rotatedSince(ctx) {
		// Rotated between the segments' seal and this open: the file
		// opened comes after a segment not sealed yet. Next round. It
		// is not the file sealed last: held, it would make the next
		// round pass over the segment before it (fromSealedFile).
		l.known = false
		l.forgetIdentity()
		return nil
	}
	if err := l.hashActive(audit, store, size, res); err != nil {
		return err
	}
	if store.n > l.last.N || !l.hasLast && (store.n > 0 || open) {
		// The lines reach the disk before a checkpoint covers them: with
		// the file sink's fsync: never (or another writer's lines) a
		// power cut would leave the file shorter than its signed log,
		// which reads as lines removed.
		if err := l.syncAudit(audit); err != nil {
			return fmt.Errorf("sync %s before its checkpoint: %w", l.path, err)
		}
		if err := l.checkpoint(store, cps, res); err != nil {
			return err
		}
	}
	l.sealedActive(store)
	if torn {
		return l.closeTornTail(ctx, audit, size, res)
	}
	return nil
}

// hashActive hashes the active file up to size into the store: only the
// new lines when the file is as the last seal left it, else all of them.
func (l *fileLog) hashActive(audit *os.File, store *hashStore, size int64, res *sealResult) error {
	var rebuilt *storeRebuild
	var err error
	if l.known {
		err = l.hashNew(audit, store, size, res)
	} else {
		rebuilt = l.shortStore(store)
		err = l.hashAll(audit, store, size, res)
	}
	if err != nil {
		return err
	}
	if err := store.flush(); err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	res.rebuilt = rebuilt
	return nil
}

// sealedActive remembers the file, store and checkpoint a good seal
// left, so the next seal hashes only what comes after.
func (l *fileLog) sealedActive(store *hashStore) {
	l.storeSize = store.size()
	l.known = true
	l.markStore(store)
	l.signed, l.hasSigned = l.last, l.hasLast
	l.sealedDev, l.sealedIno = l.dev, l.ino
}

// withoutFile decides a seal whose path has no file and no closed
// segments: done, with the seal's error, or not done, the seal goes on.
// A hash store with data is refused. A checkpoints sidecar with data is
// read by the seal: a log whose checkpoints sign no line yet goes on
// (finishWithoutActive). Neither: the path was never written, or rotated
// away with its sidecars; an explicit seal (open) goes on to sign a new
// log's first checkpoint before the file sink makes the file.
func (l *fileLog) withoutFile(open bool) (done bool, err error) {
	switch {
	case holdsData(StorePath(l.path)):
		return true, tampered(l.path, "the audit file is missing but %s holds sealed data", filepath.Base(StorePath(l.path)))
	case holdsData(CheckpointsPath(l.path)):
		return false, nil
	}
	l.known, l.hasSigned = false, false
	return !open, nil
}

// loss is what the file sink found of the file it was writing at a path:
// moved away, removed or replaced, holding size bytes, or, with cut, cut
// back from size to cutTo bytes in place.
type loss struct {
	size, cutTo int64
	cut         bool
}

// movedAway is the tampering when the file the sink was writing was moved
// away, replaced or cut back while the sidecars still hold the log: the
// lines it held after the newest checkpoint are gone from the trail, and
// the file at the path must not pass for the log's continuation. Without data in
// the sidecars (moved with the file) the path starts a new log, as after
// any rotation of file and sidecars together.
func (l *fileLog) movedAway() error {
	lost := l.replaced
	l.replaced = loss{}
	if l.sidecarWithData() == "" {
		return l.broken
	}
	if lost.cut {
		return tampered(l.path, "the file was cut back from %d to %d bytes under the collector: lines it had acknowledged "+
			"are no longer in the trail, and the file is not sealed further, so that what is left does not pass for the log",
			lost.size, lost.cutTo)
	}
	return tampered(l.path, "the file the collector was writing (%d bytes) was moved away, removed or replaced "+
		"while the log goes on in %s: the lines it held after the newest checkpoint are no longer in the trail, "+
		"and the file now at the path is not sealed as the log's continuation",
		lost.size, filepath.Base(CheckpointsPath(l.path)))
}

// sidecarWithData returns the first of the file's sidecars that holds
// data, or "" when neither does.
func (l *fileLog) sidecarWithData() string {
	for _, p := range []string{StorePath(l.path), CheckpointsPath(l.path), SegmentsPath(l.path)} {
		if holdsData(p) {
			return p
		}
	}
	return ""
}

// renewed reports whether a file found tampered with has since become the
// documented new-tree case: the file at the path is gone or is not the
// one last sealed (a rotation renamed that one; a writer may already have
// made the new one when the refusing seal ran), and neither sidecar holds
// data. The file last sealed, with its sidecars removed, stays refused.
func (l *fileLog) renewed() bool {
	if l.sidecarWithData() != "" {
		return false
	}
	fi, err := os.Lstat(l.path)
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return err == nil && ok && (uint64(st.Dev) != l.sealedDev || st.Ino != l.sealedIno)
}

func holdsData(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Size() > 0
}

// lockedSize returns the audit file's size under the writers' flock, and
// whether its last line is torn (a writer crashed mid-line). Lines are
// sealed only up to the last '\n'; a torn tail is closed by closeTornTail
// once the file has passed this seal's checks, so a tampered file is never
// written to.
func (l *fileLog) lockedSize(ctx context.Context, audit *os.File) (size int64, torn bool, err error) {
	unlock, locked, err := l.lock(ctx, audit)
	if err != nil {
		return 0, false, err
	}
	defer unlock()
	fi, err := audit.Stat()
	if err != nil {
		return 0, false, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if ok && (uint64(st.Dev) != l.dev || st.Ino != l.ino) {
		// Replaced: check it whole. Rotated with its sidecars, it starts
		// a new tree; while its checkpoints are still here they must
		// reach the newest one we knew, or a rename over the file would
		// launder a shortened sidecar.
		l.known = false
		if !holdsData(CheckpointsPath(l.path)) {
			l.hasSigned = false
		}
	}
	if ok {
		l.identify(audit, uint64(st.Dev), st.Ino)
	}
	size = fi.Size()
	if l.known && size < l.off {
		return 0, false, tampered(l.path, "the file is %d bytes, shorter than the %d bytes already sealed (cut back)", size, l.off)
	}
	if size == 0 || !locked {
		// Without flock a writer may be mid-line: the unfinished tail is
		// left for the next seal rather than closed under its writer.
		return size, false, nil
	}
	if torn, err = fsutil.EndsTorn(audit, size); err != nil {
		return size, false, fmt.Errorf("read tail: %w", err)
	}
	return size, torn, nil
}

// lock takes the writers' flock. A file system without flock is sealed
// without it (locked false), as the file sink then writes without it.
func (l *fileLog) lock(ctx context.Context, audit *os.File) (unlock func(), locked bool, err error) {
	fd := int(audit.Fd())
	err = fsutil.Lock(ctx, fd)
	switch {
	case err == nil:
		return func() { fsutil.Unlock(fd) }, true, nil
	case errors.Is(err, fsutil.ErrLockUnsupported):
		return func() {}, false, nil
	}
	return nil, false, fmt.Errorf("lock %s: %w", l.path, err)
}

// identify remembers f as the file at the path, by device and inode, and
// keeps a descriptor of it open so that neither is given to another file
// meanwhile. Without a descriptor (none left) the file stays unknown: the
// next seal checks it whole.
func (l *fileLog) identify(f *os.File, dev, ino uint64) {
	if l.held != nil && dev == l.dev && ino == l.ino {
		return
	}
	l.forgetPrevious()
	l.prevHeld, l.held, l.dev, l.ino = l.held, nil, 0, 0
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		l.known = false
		return
	}
	l.held, l.dev, l.ino = os.NewFile(uintptr(fd), f.Name()), dev, ino
}

// forgetIdentity lets the file identified last go, and the one before.
func (l *fileLog) forgetIdentity() {
	if l.held != nil {
		_ = l.held.Close()
	}
	l.held, l.dev, l.ino = nil, 0, 0
	l.forgetPrevious()
}

// forgetPrevious lets the file held before go.
func (l *fileLog) forgetPrevious() {
	if l.prevHeld != nil {
		_ = l.prevHeld.Close()
	}
	l.prevHeld = nil
}

// closeTornTail cuts a torn last line off (fsutil.CutTornTail), as the file
// sink's next append would, so that it never becomes the start of the next
// writer's line nor a line of the log. It runs only after the file passed
// the seal's checks, and only if no writer has touched the tail since.
func (l *fileLog) closeTornTail(ctx context.Context, audit *os.File, size int64, res *sealResult) error {
	unlock, locked, err := l.lock(ctx, audit)
	if err != nil || !locked {
		return err
	}
	defer unlock()
	fi, err := audit.Stat()
	if err != nil {
		return err
	}
	if fi.Size() != size {
		return nil // a writer appended since, and cut it itself
	}
	_, err = cutTorn(audit, l.path, size, res)
	return err
}

// cutTorn cuts the torn last line off f (size bytes long, locked), notes it
// in res, and returns f's new size.
func cutTorn(f *os.File, name string, size int64, res *sealResult) (int64, error) {
	write := func(b []byte) error { _, err := f.Write(b); return err }
	size, torn, err := fsutil.CutTornTail(f, name, size, write)
	if torn.Bytes > 0 {
		res.repaired = append(res.repaired, fmt.Sprintf("%s: %s", filepath.Base(name), torn))
	}
	return size, err
}

// loadCheckpoints reads the sidecar when it changed since the last seal:
// every record must carry a good signature of our key; a torn last record
// (a crash mid-append) is cut off, as it was never whole.
func (l *fileLog) loadCheckpoints(cps *os.File, res *sealResult) error {
	fi, err := cps.Stat()
	if err != nil {
		return fmt.Errorf("stat checkpoints of %s: %w", l.path, err)
	}
	if l.known && fi.Size() == l.cpSize {
		return nil
	}
	l.known = false
	l.hasLast = false
	nr := NewNoteReader(io.NewSectionReader(cps, 0, fi.Size()))
	for i := 1; ; i++ {
		rec, done, err := l.nextCheckpoint(cps, nr, i, res)
		if err != nil {
			return err
		}
		if done {
			break
		}
		if err := l.addCheckpoint(i, rec); err != nil {
			return err
		}
	}
	l.cpSize = nr.Offset()
	return l.checkStillSigned()
}

// nextCheckpoint reads record i of the sidecar cps; done at its end, or
// once a torn last record left by an earlier process is cut off.
func (l *fileLog) nextCheckpoint(cps *os.File, nr *NoteReader, i int, res *sealResult) (rec []byte, done bool, err error) {
	rec, err = nr.Next()
	if err == io.EOF {
		return nil, true, nil
	}
	if errors.Is(err, ErrTornRecord) && l.hasSigned && nr.Offset() != l.ownTear {
		// Only a crash of an earlier process tears a record; while we
		// run, one is someone else's doing: refused, never cut.
		if serr := l.checkStillSigned(); serr != nil {
			return nil, false, serr
		}
		return nil, false, tampered(l.path, "checkpoint #%d: %v", i, err)
	}
	if errors.Is(err, ErrTornRecord) {
		l.ownTear = -1
		if err := cps.Truncate(nr.Offset()); err != nil {
			return nil, false, fmt.Errorf("cut torn checkpoint of %s: %w", l.path, err)
		}
		res.repaired = append(res.repaired, "cut off a torn last checkpoint record")
		return nil, true, nil
	}
	if err != nil {
		return nil, false, tampered(l.path, "checkpoint #%d: %v", i, err)
	}
	return rec, false, nil
}

// addCheckpoint checks that record i, rec, is signed by our key and
// extends the checkpoint before it, and makes it the last one.
func (l *fileLog) addCheckpoint(i int, rec []byte) error {
	c, err := OpenCheckpoint(rec, l.keys.Verifier)
	if err != nil && i == 1 && errors.Is(err, ErrNotSignedBy) && handsOverTo(l.path, l.keys.Verifier) {
		return tampered(l.path, "checkpoint #1: %v: the log was signed with another key, and its checkpoints end with "+
			"a final one naming this key: %s, with the key that signed it", err, finishHandover)
	}
	if err != nil && i == 1 && errors.Is(err, ErrNotSignedBy) {
		return tampered(l.path, "checkpoint #1: %v: the log was signed with another key: "+
			"a log's key is changed with `sandboxaudit log handover`, run with the key that signed it", err)
	}
	if err != nil {
		return tampered(l.path, "checkpoint #%d: %v", i, err)
	}
	if l.hasLast && (c.N < l.last.N || c.Origin != l.last.Origin) {
		return tampered(l.path, "checkpoint #%d (origin %q, size %d) does not extend the one before (origin %q, size %d)",
			i, c.Origin, c.N, l.last.Origin, l.last.N)
	}
	// Every later checkpoint has the first one's origin (above), so
	// the first is the only one to check.
	if !l.hasLast {
		if err := l.checkOrigin(c); err != nil {
			return err
		}
	}
	l.last, l.hasLast = c, true
	return nil
}

// checkOrigin refuses checkpoints that name another file: a file sealed
// elsewhere with the same key (another session's, with its sidecars) put
// in this one's place verifies against its own checkpoints, and sealing on
// would sign it as this file's history. The rule is verify's (namesFile):
// a rotated copy passes, and so do origins by file name alone, as earlier
// releases wrote them below templated directories.
func (l *fileLog) checkOrigin(c Checkpoint) error {
	if namesFile(originFileOf(c.Origin, l.keys.Signer.Name()), l.path) {
		return nil
	}
	// A log handed over names the origin its handover note gave it.
	if sl, err := LoadSegmentLog(l.path, l.keys.Verifier); err == nil && sl.Genesis() != nil && sl.Genesis().Origin == c.Origin {
		return nil
	}
	return tampered(l.path, "its checkpoints name another file (origin %q, this file's is %q): "+
		"a file sealed elsewhere was put in its place, or it was renamed with its sidecars", c.Origin, l.origin)
}

// checkStillSigned refuses a sidecar that no longer reaches the newest
// checkpoint this process knew for the file: checkpoints were removed,
// and sealing on would sign whatever the file now holds, a rewritten
// history included.
func (l *fileLog) checkStillSigned() error {
	if !l.hasSigned || l.hasLast && l.last.N >= l.signed.N {
		return nil
	}
	newest := "none"
	if l.hasLast {
		newest = fmt.Sprintf("one of %d lines", l.last.N)
	}
	return tampered(l.path, "the newest checkpoint covered %d lines, the checkpoints sidecar now holds %s: signed history was removed",
		l.signed.N, newest)
}

// shortStore describes the rebuild hashAll does when the store, found on
// disk, holds fewer lines than the newest checkpoint: verify calls such a
// store damaged, so the rebuild that makes it whole again is reported.
func (l *fileLog) shortStore(store *hashStore) *storeRebuild {
	if !store.found || !l.hasLast || store.n >= l.last.N {
		return nil
	}
	return &storeRebuild{store: store.f.Name(), heldHashes: store.stored, heldLines: store.n,
		rebuiltHashes: tlog.StoredHashCount(l.last.N) - store.stored, rebuiltLines: l.last.N - store.n}
}

// hashAll checks every line of the active file against the store (its
// first line is leaf l.first), appends the lines the store lacks, and
// checks the tree against the newest checkpoint.
func (l *fileLog) hashAll(audit *os.File, store *hashStore, size int64, res *sealResult) error {
	had := store.n
	complete, _, err := l.hashLines(io.NewSectionReader(audit, 0, size), audit.Name(), store)
	if err != nil {
		return err
	}
	res.lines = store.n - had
	l.off = complete
	return nil
}

// hashLines reads the complete lines of r as the leaves from l.first on:
// those the store holds are compared with it, the rest are added. The
// leaves up to the newest checkpoint are folded into a tree of their own,
// started from the signed compact range at l.first (the store's interior
// hashes are not trusted to stand for the lines), whose root must be the
// checkpoint's. The store itself is walked as verify walks it (see
// lineCheck). It returns the bytes of complete lines read and the leaf
// index after the last one.
func (l *fileLog) hashLines(r io.Reader, name string, store *hashStore) (int64, int64, error) {
	if store.n < l.first {
		return 0, 0, tampered(l.path, "the hash store holds %s, fewer than the %d of the closed segments: it was lost or cut. "+
			"With the collector stopped, `sandboxaudit log rebuild-store --key NAME.pub %s` writes it again from the segments, "+
			"checked against the signed checkpoints", plural.Count(store.n, "line"), l.first, l.path)
	}
	c, err := l.newLineCheck(name, store)
	if err != nil {
		return 0, 0, err
	}
	defer func() { l.walked += c.walker.read }()
	lh := NewLeafHasher(c.line)
	if _, err := bufio.NewReaderSize(r, 256<<10).WriteTo(lh); err != nil {
		if errors.Is(err, ErrTampered) {
			return 0, 0, err
		}
		return 0, 0, fmt.Errorf("hash %s: %w", name, err)
	}
	if err := c.end(); err != nil {
		return 0, 0, err
	}
	if err := l.judgeLines(name, c); err != nil {
		return 0, 0, err
	}
	l.walkedStore = true
	return lh.Complete(), c.i, nil
}

// judgeLines checks the lines c read against the store and the newest
// checkpoint, then reports the store's damage, if any.
func (l *fileLog) judgeLines(name string, c *lineCheck) error {
	i, had := c.i, c.had
	if i < had && c.storeErr == nil && name != l.path {
		return tampered(l.path, "the closed segment %s, which no segment record names, ends at line %d of the log, but %d lines were sealed: "+
			"lines were deleted from it, or the segment records before it are gone (%s removed or cut)", filepath.Base(name), i, had, filepath.Base(SegmentsPath(l.path)))
	}
	if i < had && c.storeErr == nil {
		return tampered(l.path, "the file has %s but %d were sealed (cut back or lines deleted)", plural.Count(i-l.first, "line"), had-l.first)
	}
	if l.hasLast && l.last.N > l.first {
		if i < l.last.N {
			return tampered(l.path, "the file has %s, fewer than the %d of the newest checkpoint", plural.Count(i-l.first, "line"), l.last.N-l.first)
		}
		if c.rootAtLast != l.last.Hash {
			n := l.last.N - l.first
			return tampered(l.path, "the %s %s not match the newest checkpoint's root hash", plural.First(n, "line"), plural.Pick(n, "does", "do"))
		}
	}
	return c.storeErr
}

// hashNew appends the lines after the sealed offset.
func (l *fileLog) hashNew(audit *os.File, store *hashStore, size int64, res *sealResult) error {
	had := store.n
	lh := NewLeafHasher(store.add)
	if err := hashRange(audit, l.off, size, lh); err != nil {
		return err
	}
	res.lines = store.n - had
	l.off += lh.Complete()
	return nil
}

func hashRange(f *os.File, from, to int64, lh *LeafHasher) error {
	r := bufio.NewReaderSize(io.NewSectionReader(f, from, to-from), 256<<10)
	if _, err := r.WriteTo(lh); err != nil {
		if errors.Is(err, ErrTampered) {
			return err
		}
		return fmt.Errorf("hash %s: %w", f.Name(), err)
	}
	return nil
}

// checkpoint signs the current tree and appends it. The store is synced
// first: a checkpoint must never cover hashes a crash could lose.
func (l *fileLog) checkpoint(store *hashStore, cps *os.File, res *sealResult) error {
	root, err := tlog.TreeHash(store.n, store)
	if err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	if err := l.checkExtendsLast(store, root); err != nil {
		return err
	}
	origin := l.logOrigin()
	c := Checkpoint{Origin: origin, N: store.n, Hash: root}
	if !l.hasLast {
		res.newLog = origin
	}
	signed, err := SignCheckpoint(c, l.keys.Signer)
	if err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	if err := fsutil.Fdatasync(store.f); err != nil {
		return fmt.Errorf("sync hash store of %s: %w", l.path, err)
	}
	rec := AppendRecord(nil, signed)
	if _, err := cps.Write(rec); err != nil {
		return l.uncheckpoint(cps, fmt.Errorf("append checkpoint of %s: %w", l.path, err))
	}
	if err := fsutil.Fdatasync(cps); err != nil {
		return l.uncheckpoint(cps, fmt.Errorf("sync checkpoints of %s: %w", l.path, err))
	}
	l.cpSize += int64(len(rec))
	l.last, l.hasLast = c, true
	res.checkpoint = signed
	return nil
}

// checkExtendsLast proves, before root is signed, that the store's tree
// extends the newest checkpoint, as a witness would. Between full checks
// the sealer trusts the store for the sealed lines: a store rewritten to
// match an edited line, at the same size, would otherwise be signed, and
// the edit would verify.
func (l *fileLog) checkExtendsLast(store *hashStore, root tlog.Hash) error {
	if !l.hasLast || l.last.N == 0 {
		return nil
	}
	proof, err := tlog.ProveTree(store.n, l.last.N, store)
	if err == nil {
		err = tlog.CheckTree(proof, store.n, root, l.last.N, l.last.Hash)
	}
	if err != nil {
		return tampered(l.path, "the hash store %s no longer extends the newest checkpoint of %d lines: "+
			"the store, or lines and the store, were changed since it was signed (%v)", store.f.Name(), l.last.N, err)
	}
	return nil
}

// uncheckpoint cuts a checkpoint record whose append failed (a full disk
// takes a prefix) back out of the sidecar: left torn, the next seal would
// find a torn record this process made and take it for tampering. If the
// cut fails too, the record this process tore may be cut at the next seal.
func (l *fileLog) uncheckpoint(cps *os.File, cause error) error {
	if err := cps.Truncate(l.cpSize); err != nil {
		l.ownTear = l.cpSize
		return errors.Join(cause, fmt.Errorf("cut the failed checkpoint back: %w", err))
	}
	return cause
}
