// Package spool is a durable local JSONL queue for lines an endpoint did not
// take. Lines are appended to a plain JSONL file (readable by a person, the
// same format as the Python sink's spool_path), replayed in order, and the
// acknowledged prefix is trimmed.
//
// Files, for a spool at P:
//
//	P             the lines, each complete and '\n'-terminated
//	P.offset      {"inode":I,"offset":N,"tail":D}: N is the first
//	              unacknowledged byte of the file with inode I, D the digest
//	              of the bytes before it (replaced atomically)
//	P.lock        flock'ed while a Spool is open, so one owner at a time
//	P.torn-<ns>   an incomplete last line cut off at Open (never replayed)
//	P.quarantine  lines found damaged while replaying (never replayed)
//	P.adopted-<ns> the file as found when it was adopted without a sidecar
//	P.compact     transient, while the file is being rewritten
//
// Delivery is at-least-once: whenever the acknowledged offset is in doubt
// the spool resends rather than skips. Damage done to the file by others
// (bytes inserted, lines overwritten, the file cut, the sidecar removed)
// costs only the damaged lines: with Options.Check, a line that fails it
// is quarantined and replay goes on (see Damage).
package spool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/groupcommit"
)

var (
	// ErrFull is wrapped by Append when the lines do not fit under MaxSize.
	ErrFull = errors.New("spool is full")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("spool is closed")
	// ErrLocked is wrapped by Open when another Spool holds the file.
	ErrLocked = errors.New("spool is in use")
	// ErrNotASpool is wrapped by Open for a file that holds lines but no
	// offset sidecar, which every spool writes when it is made: most likely
	// an audit file, which replaying would trim away. Options.Adopt takes
	// it as a spool all the same.
	ErrNotASpool = errors.New("holds lines but has no .offset sidecar, so it is not a spool (an audit file?)")
)

// DefaultCompactBytes is the acknowledged-prefix size above which Replay
// compacts the file when Options.CompactBytes is 0.
const DefaultCompactBytes = 8 << 20

// Options configures a Spool.
type Options struct {
	// Path of the JSONL spool file.
	Path string
	// MaxSize bounds the pending (unacknowledged) bytes; 0 means unbounded.
	MaxSize int64
	// CompactBytes: when the acknowledged prefix exceeds it and is more
	// than half the file, Replay rewrites the file without it. 0 means
	// DefaultCompactBytes.
	CompactBytes int64
	// Adopt opens a file that holds lines but no offset sidecar as a spool
	// (replayed from its start and trimmed) instead of refusing it with
	// ErrNotASpool: for an operator who knows the sidecar was lost. The
	// file as found is kept, as with AdoptValid.
	Adopt bool
	// AdoptValid adopts such a file only when every whole line passes
	// Check (Recovery.Adopted says it did): a spool whose sidecar was
	// lost, where anything else is refused.
	AdoptValid bool
	// Check, when set, vets each line (with its newline) before Replay
	// hands it on: one that fails is moved to the quarantine file beside
	// the spool and reported (SetDamageHandler), never sent. Its error
	// must not quote the line: it is logged.
	Check func(line []byte) error
	// MaxLineBytes bounds a line Replay reads; a longer one is
	// quarantined. 0 means DefaultMaxLineBytes.
	MaxLineBytes int
	// Sync makes the spool file's appended lines durable; nil means
	// fdatasync(2). For tests of a slow or failing disk.
	Sync func(f *os.File) error
}

// Recovery reports what Open repaired, for the caller to log.
type Recovery struct {
	// TornBytes is the size of an incomplete last line (a crash mid-write)
	// cut off the spool; it is kept in TornPath and never replayed.
	TornBytes int64
	TornPath  string
	// TornNotKept says why the torn line could not be saved aside (a
	// full disk): it was closed with a newline in the spool instead, so
	// replay quarantines it like any damaged line, and TornPath is "".
	TornNotKept error
	// OffsetProblem says why the stored acknowledged offset was not used as
	// is ("" when it was). ResumeOffset is where replay starts.
	OffsetProblem string
	ResumeOffset  int64
	// Adopted is set when a file with lines and no sidecar was taken as a
	// spool (Options.Adopt, or Options.AdoptValid with every line valid;
	// AdoptAsked tells them apart). AdoptedKept is a second
	// name of the file as it was found, which replay does not trim, or
	// AdoptedKeptErr why there is none.
	Adopted        bool
	AdoptAsked     bool
	AdoptedKept    string
	AdoptedKeptErr error
	// MadePrivate says, per file, what Open changed to make the spool's
	// files found readable by others 0600 and this user's, or why it
	// could not.
	MadePrivate []string
	// OwnerSocketSkipped says why the owner socket (Linux) was not bound:
	// the locks on the spool's files alone keep a second owner out.
	OwnerSocketSkipped error
}

// ownerListen binds the owner socket; tests put a failing one here.
type ownerListen func(addr *net.UnixAddr) (*net.UnixListener, error)

// Spool is safe for concurrent use. Append may run concurrently with Replay.
type Spool struct {
	path, offsetPath, compactPath string
	quarantinePath                string
	maxSize, compactBytes         int64
	maxLine                       int
	lock                          *os.File
	owner                         *ownerName // held while open (owner_linux.go)
	recovery                      Recovery
	adopt, adoptValid             bool // Options.Adopt, Options.AdoptValid
	check                         func([]byte) error

	// replayMu serializes Replay, which alone moves the acknowledged offset
	// and rewrites the file. It guards sidecarStale, sidecarGone,
	// offsetBehind and upkeep.
	replayMu     sync.Mutex
	sidecarStale bool
	sidecarGone  bool  // the sidecar is missing and could not be written
	offsetBehind error // why the sidecar holds an older offset than ack
	upkeep       error // why the last trim or compaction failed

	mu     sync.Mutex
	f      *os.File // O_RDWR|O_APPEND; replaced when the file is rewritten
	ino    uint64
	end    int64 // file size; always just past a '\n'
	ack    int64 // first unacknowledged byte
	closed bool
	broken error // set when a failed append could not be rolled back
	// ackCut: the file was cut below ack, or edited before it, and ack
	// moved back; the sidecar must follow.
	ackCut bool
	// ackTail is the tail of the file before ack, to tell an edit before
	// it (see reconcileLocked).
	ackTail tail
	// changes counts the times reconcileLocked found the file changed, so
	// a replay round tells its batch's bytes are no longer where it read
	// them.
	changes uint64
	// head is the file's first bytes (up to tailWindow), to tell a file
	// cut short from one whose first lines were removed (see
	// reconcileLocked).
	head     []byte
	onDamage func(Damage)

	queue groupcommit.Queue // appends waiting for mu (see commit)

	// writeFn and syncFn are write(2) and fdatasync(2) on the file; tests
	// put failing or slow ones here.
	writeFn func(*os.File, []byte) (int, error)
	syncFn  func(*os.File) error
	// lstatFn is lstat(2) of the spool's path (see pathGoneLocked) and of
	// the compacted file's (see rewrite).
	lstatFn func(string) (os.FileInfo, error)
}

// Open opens (creating 0600, parent directories 0700) the spool at
// opts.Path, cuts off a torn last line and validates the stored offset.
func Open(ctx context.Context, opts Options) (*Spool, error) {
	return openWith(ctx, opts, listenOwner)
}

func openWith(ctx context.Context, opts Options, listen ownerListen) (*Spool, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path, err := spoolPath(opts)
	if err != nil {
		return nil, err
	}
	// Sync each parent that gained an entry, so the spool's directory
	// survives a power loss along with the data written into it.
	created, err := fsutil.MkdirAll(filepath.Dir(path))
	if err == nil {
		err = fsutil.SyncParents(created)
	}
	if err != nil {
		return nil, fmt.Errorf("spool %s: create its directory: %w", path, err)
	}
	s := newSpool(path, opts)
	// Checked before the lock file is made, so a refused path leaves
	// nothing behind; open checks the file it opens again.
	if err := s.checkExistingFile(); err != nil {
		return nil, err
	}
	if err := s.lockAndOpen(listen); err != nil {
		return nil, err
	}
	return s, nil
}

// spoolPath checks opts and returns the spool's absolute path.
func spoolPath(opts Options) (string, error) {
	if opts.Path == "" {
		return "", errors.New("the spool path is empty")
	}
	if opts.MaxSize < 0 || opts.CompactBytes < 0 || opts.MaxLineBytes < 0 {
		return "", fmt.Errorf("spool max size (%d), compact bytes (%d) and max line bytes (%d) must be >= 0",
			opts.MaxSize, opts.CompactBytes, opts.MaxLineBytes)
	}
	path, err := filepath.Abs(opts.Path)
	if err != nil {
		return "", fmt.Errorf("spool %s: %w", opts.Path, err)
	}
	return path, nil
}

// newSpool builds the unopened Spool at path, filling in defaults.
func newSpool(path string, opts Options) *Spool {
	s := &Spool{
		path:           path,
		offsetPath:     path + ".offset",
		compactPath:    path + ".compact",
		quarantinePath: path + ".quarantine",
		maxSize:        opts.MaxSize,
		compactBytes:   opts.CompactBytes,
		maxLine:        opts.MaxLineBytes,
		adopt:          opts.Adopt,
		adoptValid:     opts.AdoptValid && opts.Check != nil,
		check:          opts.Check,
		writeFn:        (*os.File).Write,
		syncFn:         fsutil.Fdatasync,
		lstatFn:        os.Lstat,
	}
	if opts.Sync != nil {
		s.syncFn = opts.Sync
	}
	if s.compactBytes == 0 {
		s.compactBytes = DefaultCompactBytes
	}
	if s.maxLine <= 0 {
		s.maxLine = DefaultMaxLineBytes
	}
	return s
}

// checkExistingFile refuses a file at the spool's path that is not a
// regular file or not a spool.
func (s *Spool) checkExistingFile() error {
	fi, err := os.Lstat(s.path)
	if err != nil {
		return nil // nothing there yet; open reports any other failure
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("spool %s is %w (%s): the spool opens no symlink, FIFO or directory in its place", s.path, fsutil.ErrNotRegular, fi.Mode().Type())
	}
	return s.checkIsSpool(fi)
}

// lockAndOpen takes the .lock file and the owner name, then opens the
// spool; on failure it lets go of whatever it took.
func (s *Spool) lockAndOpen(listen ownerListen) error {
	var lockCreated bool
	var err error
	if s.lock, lockCreated, err = lockOwner(s.path + ".lock"); err != nil {
		return err
	}
	s.owner, s.recovery.OwnerSocketSkipped, err = holdOwnerName(s.path, listen)
	if err == nil {
		err = s.open()
	}
	if err != nil {
		if s.f != nil {
			_ = s.f.Close()
		}
		if lockCreated && errors.Is(err, ErrLocked) {
			removeOwnLock(s.lock)
		}
		_ = s.lock.Close()
		_ = s.owner.release()
		return err
	}
	return nil
}

// lockOwner opens and locks the .lock file at path, making it when there
// is none (created says so).
func lockOwner(path string) (f *os.File, created bool, err error) {
	f, _, err = openFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL)
	created = err == nil
	if errors.Is(err, os.ErrExist) {
		f, _, err = openFile(path, os.O_RDWR)
	}
	if err == nil {
		err = lockFile(f)
	}
	if err != nil {
		if f != nil {
			_ = f.Close()
		}
		return nil, false, pathError("spool lock", path, err)
	}
	return f, created, nil
}

// removeOwnLock removes the .lock file an Open made and then was refused
// on, so a refused Open leaves no file of its own. It is removed only
// while it is still the file at its path; as it is locked, no owner holds
// it.
func removeOwnLock(lock *os.File) {
	if namesFile(os.Lstat, lock.Name(), lock) {
		_ = os.Remove(lock.Name())
	}
}

// lockData takes the lock of the spool's file f itself, which the owner
// holds on every file that is at the path: the .lock file alone can be
// removed while the spool is open (it is never written, so a cleaner of
// old files takes it), and a second owner would then get in.
func lockData(f *os.File, path string) error {
	if err := lockFile(f); err != nil {
		return fmt.Errorf("spool %s: lock its file: %w", path, err)
	}
	return nil
}

// lockFile takes flock on f without waiting; ErrLocked when another open
// file holds it.
func lockFile(f *os.File) error {
	err := fsutil.TryLock(int(f.Fd()))
	if errors.Is(err, fsutil.ErrLockHeld) {
		return ErrLocked
	}
	return err
}

// open opens the data file and performs recovery; s.lock is held.
func (s *Spool) open() error {
	f, fi, err := openFile(s.path, os.O_RDWR|os.O_CREATE|os.O_APPEND)
	if err != nil {
		return pathError("spool", s.path, err)
	}
	s.f = f
	if err := lockData(f, s.path); err != nil {
		return err
	}
	s.notePrivate(makePrivate(f, fi))
	s.makeQuarantinePrivate()
	// Leftovers of a rewrite or sidecar update cut short by a crash; the
	// real files are intact (both are only ever replaced by rename).
	for _, p := range []string{s.compactPath, s.offsetPath + ".tmp"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("spool %s: remove stale %s: %w", s.path, p, err)
		}
	}
	if err := fsutil.SyncDir(filepath.Dir(s.path)); err != nil {
		return fmt.Errorf("spool %s: sync its directory: %w", s.path, err)
	}
	if s.end, err = s.cutTornTail(fi.Size()); err != nil {
		return err
	}
	if s.ino, err = inode(f); err != nil {
		return fmt.Errorf("spool %s: stat: %w", s.path, err)
	}
	s.head = headOf(f, s.end)
	return s.loadOffset()
}

// checkIsSpool refuses, before anything is changed, a file with lines and
// no offset sidecar: a spool writes its sidecar when it is made, so such a
// file is someone else's, an audit file reached through a symlink or a
// second exporter's spool path, and replaying it would trim it away.
func (s *Spool) checkIsSpool(fi os.FileInfo) error {
	if fi.Size() == 0 {
		return nil
	}
	_, err := os.Lstat(s.offsetPath)
	switch {
	case err == nil:
		return nil
	case s.adopt:
		if errors.Is(err, os.ErrNotExist) {
			// Adopted on the operator's word, kept as found all the same:
			// the word may be wrong (an audit file).
			s.adopted(true)
		}
		return nil
	case errors.Is(err, os.ErrNotExist) && s.adoptValid:
		return s.adoptIfValid()
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s %w; refusing to replay and trim it. If it is a spool another program wrote "+
			"(the Python sink's spool_path) or one whose .offset file was lost, replay it with `sandboxaudit replay --adopt`, or move it aside", s.path, ErrNotASpool)
	}
	return fmt.Errorf("spool %s: %w", s.path, err)
}

// cutTornTail moves bytes after the last '\n' (an append cut short by a
// crash) to a side file and truncates them away, or closes them with a
// newline when the side files would pass MaxSize (see
// fsutil.CutTornTailWithin).
// It returns the new size.
func (s *Spool) cutTornTail(size int64) (int64, error) {
	write := func(b []byte) error {
		_, err := s.writeFn(s.f, b)
		return err
	}
	// The side files share the quarantine's bound, MaxSize.
	end, torn, err := fsutil.CutTornTailWithin(s.f, s.path, size, s.maxSize, write)
	if err != nil {
		return 0, fmt.Errorf("spool %s: %w", s.path, err)
	}
	if torn.Bytes == 0 {
		return end, nil
	}
	if err := s.syncFn(s.f); err != nil {
		return 0, fmt.Errorf("spool %s: sync: %w", s.path, err)
	}
	if errors.Is(torn.NotKept, fsutil.ErrTornOverLimit) {
		torn.NotKept = fmt.Errorf("%w (the spool's max size)", torn.NotKept)
	}
	s.recovery.TornBytes, s.recovery.TornPath, s.recovery.TornNotKept = torn.Bytes, torn.KeptIn, torn.NotKept
	return end, nil
}

// loadOffset validates the sidecar against the file. Whenever the stored
// offset cannot be trusted it moves backwards (to the start of the line it
// points into, or to 0): resending is safe under at-least-once, skipping is
// not. An offset beyond the end of the file means the file is not the one the
// offset was written for, so everything is resent.
func (s *Spool) loadOffset() error {
	rec, found, readErr := readOffset(s.offsetPath)
	namesThisFile := readErr == nil && found && rec.Inode == s.ino
	off := int64(0)
	switch {
	case readErr != nil:
		s.recovery.OffsetProblem = fmt.Sprintf("%v; replaying from 0", readErr)
	case !found:
		if s.end > 0 {
			s.recovery.OffsetProblem = "no offset file; replaying from 0"
		}
	case rec.Inode != s.ino:
		// Expected after a crash between replacing the file and updating
		// the sidecar: the new file holds only unacknowledged lines.
		s.recovery.OffsetProblem = fmt.Sprintf("offset file refers to an earlier spool file (inode %d, now %d); replaying from 0", rec.Inode, s.ino)
	case rec.Offset < 0 || rec.Offset > s.end:
		s.recovery.OffsetProblem = fmt.Sprintf("stored offset %d is outside the file (size %d); replaying from 0", rec.Offset, s.end)
	default:
		off = rec.Offset
		if off > 0 {
			boundary, err := fsutil.LastLineEnd(s.f, off)
			if err != nil {
				return fmt.Errorf("spool %s: scan: %w", s.path, err)
			}
			// The tail first: an edit that moved the offset off a line
			// boundary may have moved whole lines below it too.
			switch {
			case !tailFromHex(rec.Tail).matches(s.f, off):
				s.recovery.OffsetProblem = fmt.Sprintf("the bytes before stored offset %d changed (the file was edited in place); replaying from 0", off)
				off = 0
			case boundary != off:
				s.recovery.OffsetProblem = fmt.Sprintf("stored offset %d is not at a line boundary; replaying from %d", off, boundary)
				off = boundary
			}
		}
	}
	s.ack, s.ackTail = off, tailOf(s.f, off)
	s.recovery.ResumeOffset = off
	if !found || s.recovery.OffsetProblem != "" {
		if err := writeOffset(s.offsetPath, offsetRecord{Inode: s.ino, Offset: off, Tail: s.ackTail.String()}); err != nil {
			return s.offsetNotWritten(err, readErr, namesThisFile)
		}
	}
	return nil
}

// offsetNotWritten decides what a sidecar that Open could not write again
// (writeErr) means; readErr is why the one found could not be read. On a full disk, a spool with lines opens all
// the same when the stored record can never pass for this file's (it is
// missing, unreadable, or names another inode, which no new file gets
// before the sidecar is corrected): replay saves it once it can, and
// Upkeep says it is behind meanwhile, so the lines are still delivered.
// A record naming this file with a wrong offset could be trusted by a
// later Open once the file grows past it, so it stops Open, as does a new
// spool's, and any other error (a directory at the sidecar's path would
// block every trim) too.
func (s *Spool) offsetNotWritten(writeErr, readErr error, namesThisFile bool) error {
	full := errors.Is(writeErr, syscall.ENOSPC) || errors.Is(writeErr, syscall.EDQUOT)
	switch {
	case readErr != nil && !full:
		// What is in the way (a directory) says more than the failed
		// rename ("file exists").
		return fmt.Errorf("spool %s: %w (the sidecar as found: %v)", s.path, writeErr, readErr)
	case s.end == 0 || namesThisFile || !full:
		return fmt.Errorf("spool %s: %w", s.path, writeErr)
	}
	s.sidecarStale = true
	s.offsetBehind = fmt.Errorf("spool %s: offset %d not saved at start: %w", s.path, s.ack, writeErr)
	return nil
}

// Recovery returns what Open repaired.
func (s *Spool) Recovery() Recovery { return s.recovery }

// Path returns the spool file's absolute path.
func (s *Spool) Path() string { return s.path }

// Append durably adds lines (one or more complete '\n'-terminated lines)
// with one write and an fdatasync; when it returns nil the lines survive a
// crash. Appends that queue while another is being written share its
// successor's sync (see groupcommit). If the lines would take the pending
// bytes over MaxSize it writes nothing and returns an error wrapping
// ErrFull.
func (s *Spool) Append(ctx context.Context, lines []byte) error {
	if len(lines) == 0 {
		return nil
	}
	if lines[len(lines)-1] != '\n' {
		return fmt.Errorf("spool %s: appended data does not end with a newline", s.path)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b := &groupcommit.Batch{Data: lines}
	if s.queue.Wait(b) {
		s.commit(b)
	}
	return b.Err()
}

// commit appends the group at the front of the queue, own first.
func (s *Spool) commit(own *groupcommit.Batch) {
	defer s.queue.Pop()
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		// Bytes past s.end may be in the file: stop appending after them.
		if r := recover(); r != nil {
			s.broken = fmt.Errorf("an append panicked: %v", r)
			panic(r)
		}
	}()
	switch {
	case s.closed:
		own.Finish(ErrClosed)
		return
	case s.broken != nil:
		own.Finish(fmt.Errorf("spool %s: unusable until reopened: %w", s.path, s.broken))
		return
	}
	group := s.queue.Group(groupcommit.MaxGroupBytes)
	s.appendGroupLocked(group)
}

// appendGroupLocked writes each batch of group that fits under MaxSize and
// then syncs them all. A batch whose write fails is cut back out and fails
// alone (unless the cut fails: the spool is then broken and the rest of the
// group fails too); if the sync fails, all of them are cut back and fail:
// after a failed sync the page cache cannot be trusted to reach the disk,
// so the caller's error must be the whole truth. s.end moves only after
// the sync, so Replay never reads lines that are not durable.
func (s *Spool) appendGroupLocked(group []*groupcommit.Batch) {
	own, err := s.reconcileLocked()
	if err == nil {
		err = s.followPathForAppendLocked(own)
	}
	if err != nil {
		groupcommit.FinishAll(group, err)
		return
	}
	end := s.end
	var written, cut []*groupcommit.Batch
	for i, b := range group {
		if pending := end - s.ack; s.maxSize > 0 && pending+int64(len(b.Data)) > s.maxSize {
			b.Finish(fmt.Errorf("spool %s: %d pending + %d new bytes exceed max size %d: %w", s.path, pending, len(b.Data), s.maxSize, ErrFull))
			continue
		}
		// os.File.Write continues short writes; an error may still leave
		// part of the lines behind, which the cut removes.
		if _, err := s.writeFn(s.f, b.Data); err != nil {
			b.Finish(s.cutLocked(end, fmt.Errorf("spool %s: write: %w", s.path, err)))
			cut = append(cut, b)
			if s.broken != nil {
				groupcommit.FinishAll(group[i+1:], fmt.Errorf("spool %s: unusable until reopened: %w", s.path, s.broken))
				break
			}
			continue
		}
		end += int64(len(b.Data))
		written = append(written, b)
	}
	if len(written) == 0 && len(cut) == 0 {
		return
	}
	// One sync makes the written batches and any cut durable.
	if err := s.syncFn(s.f); err != nil {
		err = fmt.Errorf("spool %s: sync: %w", s.path, err)
		for _, b := range cut { // their cut may not survive a crash
			b.Finish(errors.Join(b.Err(), err))
		}
		groupcommit.FinishAll(written, s.cutLocked(s.end, err))
		return
	}
	if int64(len(s.head)) < min(end, tailWindow) {
		s.head = grownHead(s.f, s.head, s.end, end, written)
	}
	s.end = end
	groupcommit.FinishAll(written, nil)
}

// cutLocked truncates the file to size, dropping a failed append, and
// returns err. If the cut fails the spool is broken until reopened, and
// Open's recovery cuts only a partial last line: whole lines of the failed
// append stay and are replayed, a duplicate of the caller's retry, which
// delivery being at least once allows.
func (s *Spool) cutLocked(size int64, err error) error {
	if terr := s.f.Truncate(size); terr != nil {
		s.broken = terr
		return fmt.Errorf("%w (rollback failed: %v)", err, terr)
	}
	return err
}

// Size returns the pending (unacknowledged) bytes.
func (s *Spool) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.end - s.ack
}

// Position is the spool file's inode and its acknowledged offset: what a
// note about the lines past that offset is valid for.
func (s *Spool) Position() (inode uint64, acked int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ino, s.ack
}

// Pending reports whether there are unacknowledged lines, or appends on
// their way in (queued or being written): lines a caller must not overtake
// by delivering live, and that a replayer must not take for an empty spool.
func (s *Spool) Pending() bool { return s.queue.Len() > 0 || s.Size() > 0 }

// Close releases the spool. It waits for a running Replay to return, so
// cancel the context given to Replay first.
func (s *Spool) Close() error {
	s.replayMu.Lock()
	defer s.replayMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.f.Close()
	if lerr := s.lock.Close(); err == nil {
		err = lerr
	}
	if oerr := s.owner.release(); err == nil {
		err = oerr
	}
	if err != nil {
		return fmt.Errorf("spool %s: close: %w", s.path, err)
	}
	return nil
}
