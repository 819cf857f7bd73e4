package integrity

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// maxIdleLogs bounds the files the sealer remembers between seals (a
// templated path makes one file per session). A forgotten file is checked
// whole again the next time it is sealed.
const maxIdleLogs = 1024

// Observer receives the sealer's counts for telemetry.
type Observer interface {
	LinesSealed(ctx context.Context, n int64)
	CheckpointWritten(ctx context.Context)
	// SealLag is the number of lines written through Wrote and not sealed yet.
	SealLag(ctx context.Context, n int64)
}

// Settings configure a Sealer.
type Settings struct {
	Keys     *Keys
	Interval time.Duration
	Logger   *zap.Logger
	Observer Observer // optional
	// Witnesses, when set, cosign every newest checkpoint (docs/witnesses.md).
	Witnesses Witnesses
	// OriginBase is the directory files are named below in their
	// checkpoints' origin (see originOf): a path template's literal
	// directory. Empty: by file name.
	OriginBase string
	// CallerOwns: the caller holds the owner lock of every path it seals
	// (LockLog), as a `sandboxaudit log` command does; the sealer takes
	// none itself.
	CallerOwns bool

	// lockLog takes a path's owner lock (lockLogMkdir); a test stands in
	// for a file system without flock.
	lockLog func(path string) (*OwnerLock, error)
	// syncAudit makes an audit file's lines durable before a checkpoint
	// covers them (fsutil.Fdatasync); a test watches when it runs.
	syncAudit func(*os.File) error
	// beforeActive runs as a seal turns from the closed segments to the
	// active file; a test rotates the file there.
	beforeActive func()
}

// Sealer keeps the Merkle trees and checkpoints of the audit files a file
// sink writes. The sink reports each write with Wrote; every Interval the
// sealer seals the files written to (and whatever else was appended to
// them, the Python sink's lines included) and appends a checkpoint.
type Sealer struct {
	set Settings

	mu      sync.Mutex
	pending map[string]int64 // lines written per path since its last seal
	// replaced: paths whose file the sink found moved away, replaced or
	// cut back under it (see Replaced and CutBack).
	replaced map[string]loss
	// rotations: per path, the segments the file sink reported making
	// (Rotated) and the sealer has not recorded yet.
	rotations map[string]map[string]bool
	// rotatedByOthers: paths another writer rotates too (RotatedByOther);
	// the first report of each is logged at INFO.
	rotatedByOthers map[string]bool
	// sinkFiles: per path, the file the sink opened there last (Opened).
	sinkFiles map[string]os.FileInfo
	lag       int64
	watched   map[string]bool // sealed every round, written or not

	sealMu  sync.Mutex // one seal round at a time
	logs    map[string]*fileLog
	scratch storeScratch
	// witnessMu: one round's witness requests at a time, made without
	// sealMu (see witnessAll). Taken before sealMu, never after.
	witnessMu sync.Mutex
	wit       witnessing
	// noFlockWarned: the warning that the file system has no flock was
	// logged, once for all the files of the exporter's path.
	noFlockWarned bool
	// closed: Close let the owner locks go; SealNew takes no new one.
	closed bool

	stop chan struct{}
	done chan struct{}
	// witnessEnded is closed when witnessLoop ends (nil: none runs).
	witnessEnded chan struct{}
	// endRound cancels the round the loop is running and the witness
	// requests in flight: Close does not wait for a witness that hangs
	// (its checkpoint is submitted again).
	endRound context.CancelFunc
}

// NewSealer returns a sealer; Start runs its interval loop.
func NewSealer(set Settings) (*Sealer, error) {
	if set.Keys == nil {
		return nil, errors.New("no signing key")
	}
	if set.Interval <= 0 {
		return nil, fmt.Errorf("checkpoint interval must be > 0, got %s", set.Interval)
	}
	if set.Logger == nil {
		set.Logger = zap.NewNop()
	}
	if set.lockLog == nil {
		set.lockLog = lockLogMkdir
	}
	if set.syncAudit == nil {
		set.syncAudit = fsutil.Fdatasync
	}
	return &Sealer{
		set:             set,
		pending:         map[string]int64{},
		replaced:        map[string]loss{},
		rotations:       map[string]map[string]bool{},
		rotatedByOthers: map[string]bool{},
		sinkFiles:       map[string]os.FileInfo{},
		watched:         map[string]bool{},
		logs:            map[string]*fileLog{},
		wit:             witnessing{wake: make(chan struct{}, 1)},
	}, nil
}

// Wrote records that lines were appended to path. It is the file sink's
// hook and costs a map update.
func (s *Sealer) Wrote(path string, lines int) {
	s.mu.Lock()
	s.pending[path] += int64(lines)
	s.lag += int64(lines)
	lag := s.lag
	s.mu.Unlock()
	if s.set.Observer != nil {
		s.set.Observer.SealLag(context.Background(), lag)
	}
}

// Replaced records that the file the sink was writing at path, holding
// size bytes, was moved away, removed or replaced by someone else: its
// lines after the newest checkpoint left the log. The next seal of path
// refuses it while its sidecars hold the log (see fileLog.replaced). It is
// the file sink's OnReplaced hook.
func (s *Sealer) Replaced(path string, size int64) {
	s.lost(path, loss{size: size})
}

// CutBack records that the file the sink was writing at path, still there,
// was cut back by someone else from from to to bytes: lines it had
// acknowledged are gone, and sealing what is left would hide that. The
// next seal of path refuses the file, as a replaced one (see
// fileLog.replaced). It is the file sink's OnCutBack hook.
func (s *Sealer) CutBack(path string, from, to int64) {
	s.lost(path, loss{size: from, cutTo: to, cut: true})
}

func (s *Sealer) lost(path string, l loss) {
	s.mu.Lock()
	s.replaced[path] = l
	s.pending[path] += 0
	s.mu.Unlock()
}

// takeReplaced returns and clears what Replaced or CutBack recorded for
// path (size 0: nothing).
func (s *Sealer) takeReplaced(path string) loss {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.replaced[path]
	delete(s.replaced, path)
	return l
}

// Rotated records that the file sink rotated path to segment: the next
// round seals and records the closed segment even when no line follows (a
// rotation on time, with no batch). Once the sink reports rotations of a
// path, the sealer records only the segments it reported (and the file it
// sealed last): a file named as a segment that someone put beside them is
// not the log's. It is the sink's Rotation.OnRotate hook, called under the
// writers' flock on the renamed file.
func (s *Sealer) Rotated(path, segment string) {
	s.mu.Lock()
	if s.rotations[path] == nil {
		s.rotations[path] = map[string]bool{}
	}
	s.rotations[path][filepath.Base(segment)] = true
	s.mu.Unlock()
	s.Wrote(path, 0)
}

// RotatedByOther records that another writer of path, a second
// collector's file sink, rotated a file of the log to segment: the file
// this process's sink appended to (its OnRotatedByOther hook), or the file
// sealed last, found under a segment name no rotation of ours made. The
// segment is the log's, sealed as the sink's own rotations are. Since the
// other writer's rotations of files this process never wrote to are not
// reported here, every segment after the last recorded one is then taken
// as the log's, as before any rotation was reported (see rotation).
func (s *Sealer) RotatedByOther(path, segment string) {
	s.mu.Lock()
	logged := s.rotatedByOthers[path]
	s.rotatedByOthers[path] = true
	s.mu.Unlock()
	// Neutral about who seals: the collector that only writes the path
	// (another holds its owner lock) reports the other's rotations too.
	msg := "integrity: another writer of the path (a second collector) rotated a file of the log; " +
		"the collector sealing the log seals the segment as a rotation"
	if logged {
		s.set.Logger.Debug(msg, zap.String("path", path), zap.String("segment", filepath.Base(segment)))
	} else {
		s.set.Logger.Info(msg+" (logged once per path, then at DEBUG)", zap.String("path", path), zap.String("segment", filepath.Base(segment)))
	}
	s.Rotated(path, segment)
}

// Opened records the file the sink opened at path, by its identity: a
// segment that is that file, not reported as a rotation of this process,
// is another writer's rotation of a file of the log (rotatedBySink). It
// is the sink's OnOpened hook.
func (s *Sealer) Opened(path string, fi os.FileInfo) {
	s.mu.Lock()
	s.sinkFiles[path] = fi
	s.mu.Unlock()
}

// sinkFile returns the file the sink opened at path last, or nil.
func (s *Sealer) sinkFile(path string) os.FileInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sinkFiles[path]
}

// reportedRotations returns the segments of path the sink reported and
// the sealer has not recorded yet.
func (s *Sealer) reportedRotations(path string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for name := range s.rotations[path] {
		out = append(out, name)
	}
	return out
}

// rotation reports whether the sink reports path's rotations (tracked)
// and whether it reported the segment named name; done forgets name, once
// recorded.
func (s *Sealer) rotation(path, name string, done bool) (tracked, reported bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names, tracked := s.rotations[path]
	reported = names[name]
	if s.rotatedByOthers[path] {
		tracked = false
	}
	if done {
		delete(names, name)
	}
	return tracked, reported
}

// Seal seals path now: on start, so that the lines written since the last
// checkpoint (before a crash, or by another writer) are sealed, and a
// disagreement is found before anything is added. A log without any
// checkpoint gets its first one, of 0 lines when it holds none yet: a
// collector killed before its first round then finds, at its next start,
// signed history that the file extends, not lines without any.
func (s *Sealer) Seal(ctx context.Context, path string) error {
	w, err := s.sealOpen(ctx, path)
	if err != nil {
		return err
	}
	s.witnessAll(ctx, []witnessed{w})
	return nil
}

func (s *Sealer) sealOpen(ctx context.Context, path string) (witnessed, error) {
	s.sealMu.Lock()
	defer s.sealMu.Unlock()
	if err := s.sealPath(ctx, path, true); err != nil {
		return witnessed{}, err
	}
	return s.newestLocked(path), nil
}

// ErrSealerClosed is returned by SealNew after Close.
var ErrSealerClosed = errors.New("the sealer is closed")

// SealNew seals a file the file sink is about to make (its BeforeCreate
// hook), as Seal does: a new log, a templated path's new session, gets its
// first checkpoint, of 0 lines, before its first line. It waits for a
// round's seals in progress, not for its witnesses, and asks none itself:
// the next round submits what the file's first batch adds. The
// remembered files stay within their bound, as at
// start: many sessions may begin within one interval. After Close it
// fails: a write still in flight at shutdown makes no file that no
// checkpoint covers, and takes no owner lock that nothing lets go.
func (s *Sealer) SealNew(ctx context.Context, path string) error {
	s.sealMu.Lock()
	defer s.sealMu.Unlock()
	if s.closed {
		return fmt.Errorf("%s: %w", path, ErrSealerClosed)
	}
	defer s.forgetIdle(map[string]int64{path: 0})
	return s.sealPath(ctx, path, true)
}

// Watch makes every round seal path even when this process wrote nothing
// to it, so lines another writer (the Python sink) appends are checkpointed
// within an interval too. The exporter watches a plain (untemplated) path.
func (s *Sealer) Watch(path string) {
	s.mu.Lock()
	s.watched[path] = true
	s.mu.Unlock()
}

// Start runs the interval loop until Close and, with witnesses, the
// goroutine that submits what the loop's rounds seal (witnessLoop).
func (s *Sealer) Start() {
	s.stop = make(chan struct{})
	s.done = make(chan struct{})
	roundCtx, endRound := context.WithCancel(context.Background())
	s.endRound = endRound
	if s.set.Witnesses != nil {
		s.witnessEnded = make(chan struct{})
		go s.witnessLoop(roundCtx)
	}
	go s.loop(roundCtx)
}

// loop seals every interval and hands the witnesses' part to witnessLoop:
// a witness that is slow or hangs does not hold up the next seals.
func (s *Sealer) loop(roundCtx context.Context) {
	defer close(s.done)
	t := time.NewTicker(s.set.Interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(roundCtx, s.roundTimeout())
			sealed, _ := s.sealRound(ctx)
			cancel()
			s.queueWitness(sealed)
			s.queueRetries()
		}
	}
}

// roundTimeout bounds a round's seals, and a witness round, in the loop.
func (s *Sealer) roundTimeout() time.Duration { return RoundTimeout(s.set.Interval) }

// RoundTimeout bounds a round's seals, and a witness round with each of
// its requests, for a checkpoint interval.
func RoundTimeout(interval time.Duration) time.Duration { return interval*10 + 10*time.Second }

// Close stops the loop and witnessLoop, cancelling the round and the
// witness requests in flight (they end at once), and seals what was
// written since the last round, so a clean shutdown always leaves a
// checkpoint over the whole file, then lets the owner locks go. That final
// round submits the newest checkpoints to the witnesses within ctx, those
// of files the loop sealed and witnessLoop had not submitted yet included;
// one they did not cosign is submitted again at the next start. No witness
// request is in flight once it returns.
func (s *Sealer) Close(ctx context.Context) error {
	if s.stop != nil {
		s.endRound()
		close(s.stop)
		<-s.done
		if s.witnessEnded != nil {
			<-s.witnessEnded
		}
		s.stop = nil
	}
	s.sealShared()
	err := s.SealPending(ctx)
	s.witnessMu.Lock() // after any Seal's requests; none start after
	defer s.witnessMu.Unlock()
	s.sealMu.Lock()
	defer s.sealMu.Unlock()
	s.closed = true
	for _, l := range s.logs {
		l.letGo()
	}
	return err
}

// sealShared makes the final round seal each path another writer of it (a
// second collector) rotates too: the lines that writer appended since this
// collector's sink last wrote there, or since its last rotation, are
// sealed only when a round takes the path, and none comes after this one.
func (s *Sealer) sealShared() {
	s.sealMu.Lock()
	owned := map[string]bool{}
	for p, l := range s.logs {
		owned[p] = l.owner != nil || s.set.CallerOwns
	}
	s.sealMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range s.rotatedByOthers {
		if owned[p] { // another collector seals the others
			s.pending[p] += 0
		}
	}
}

// SealPending seals every file written since the last round, then
// submits their newest checkpoints to the witnesses, with those of files
// queued for witnessLoop and not submitted yet, and returns the errors
// joined (each is also logged).
func (s *Sealer) SealPending(ctx context.Context) error {
	sealed, err := s.sealRound(ctx)
	s.queueRetries()
	s.witnessAll(ctx, s.takeQueued(sealed))
	return err
}

// sealRound seals every file written since the last round or watched,
// and returns the newest checkpoint of each file it sealed, for the
// witnesses.
func (s *Sealer) sealRound(ctx context.Context) ([]witnessed, error) {
	s.mu.Lock()
	batch := s.pending
	s.pending = map[string]int64{}
	for p := range s.watched {
		batch[p] += 0
	}
	s.mu.Unlock()
	if len(batch) == 0 {
		return nil, nil
	}
	return s.sealBatch(ctx, batch)
}

// sealBatch seals the files of a round under sealMu and returns the
// newest checkpoint of each file it sealed, for the witnesses.
func (s *Sealer) sealBatch(ctx context.Context, batch map[string]int64) ([]witnessed, error) {
	s.sealMu.Lock()
	defer s.sealMu.Unlock()
	var errs []error
	var toWitness []witnessed
	sealed := 0
	for path, n := range batch {
		if sealed++; sealed%(maxIdleLogs/4) == 0 {
			// A burst of more files than the bound in one round: let
			// the locks of those sealed before go as it proceeds.
			s.forgetIdle(map[string]int64{})
		}
		if err := s.sealPath(ctx, path, false); err != nil {
			// The lines stay in the lag: they are not covered.
			errs = append(errs, err)
			if ctx.Err() != nil {
				s.requeue(path, n) // a round cut short: the next one (Close's) seals it
			}
			continue
		}
		toWitness = append(toWitness, s.newestLocked(path))
		s.mu.Lock()
		s.lag -= n
		lag := s.lag
		s.mu.Unlock()
		if s.set.Observer != nil {
			s.set.Observer.SealLag(ctx, lag)
		}
	}
	s.forgetIdle(batch)
	return toWitness, errors.Join(errs...)
}

// requeue puts path back among the files the next round seals.
func (s *Sealer) requeue(path string, n int64) {
	s.mu.Lock()
	s.pending[path] += n
	s.mu.Unlock()
}

// sealPath seals one file; open: a log without a checkpoint gets one
// (see Seal). Called with sealMu held.
func (s *Sealer) sealPath(ctx context.Context, path string, open bool) error {
	if err := s.refuseRetired(path); err != nil {
		return err
	}
	l := s.logFor(path)
	if err := s.own(l); err != nil {
		if errors.Is(err, ErrLogOwned) {
			s.dropRotations(path)
		}
		if err.Error() != l.lastErr {
			s.set.Logger.Error("integrity: file not sealed", zap.String("path", path), zap.Error(err))
		}
		l.lastErr = err.Error()
		return err
	}
	if lost := s.takeReplaced(path); lost.size > 0 {
		l.replaced = lost
	}
	wasBroken := l.broken != nil
	res, err := l.seal(ctx, open)
	s.logSealWarnings(path, l, res)
	if err != nil {
		// Once per cause: a file that fails the same way every interval
		// (a symlink planted for its store) must not flood the log.
		if (!wasBroken || res.renewed) && err.Error() != l.lastErr {
			s.set.Logger.Error("integrity: file not sealed", zap.String("path", path), zap.Error(err))
		}
		l.lastErr = err.Error()
		return err
	}
	l.lastErr, l.repairsLogged = "", nil
	s.reportSealed(ctx, path, res)
	return nil
}

// logSealWarnings logs what a seal of l repaired, rebuilt or started
// afresh, whether or not the seal then succeeded.
func (s *Sealer) logSealWarnings(path string, l *fileLog, res sealResult) {
	for _, r := range res.repaired {
		// Once per episode: a seal that fails after its repair (a full
		// disk) finds and repairs the same damage every interval.
		if !slices.Contains(l.repairsLogged, r) {
			s.set.Logger.Warn("integrity: repaired crash damage", zap.String("path", path), zap.String("repair", r))
			l.repairsLogged = append(l.repairsLogged, r)
		}
	}
	if rb := res.rebuilt; rb != nil {
		// verify --key called this store damaged; after the rebuild it
		// passes, so the log is the one record that it was cut.
		s.set.Logger.Warn("integrity: the hash store was cut short, below the newest checkpoint, and was rebuilt from the file",
			zap.String("path", path), zap.String("store", rb.store),
			zap.Int64("hashes_held", rb.heldHashes), zap.Int64("lines_held", rb.heldLines),
			zap.Int64("hashes_rebuilt", rb.rebuiltHashes), zap.Int64("lines_rebuilt", rb.rebuiltLines))
	}
	if res.renewed {
		s.set.Logger.Warn("integrity: a file refused before was replaced and its sidecars are gone (a rotation completed?); "+
			"sealing starts a new tree. The tampering logged before still stands for the file that was there",
			zap.String("path", path))
	}
	if res.unsigned > 0 {
		// Not refused: a crash during the first seal leaves the same
		// state. But an operator must hear that signed history may be gone.
		s.set.Logger.Warn("integrity: the hash store holds lines no checkpoint signs; sealing the file afresh. "+
			"The checkpoints sidecar was removed or emptied, or the first seal was cut short: "+
			"verify --key cannot tell what changed before this seal (a witness or a copy of the checkpoints can)",
			zap.String("path", path), zap.Int64("lines", res.unsigned))
	}
}

// reportSealed logs a new log's origin and counts what a successful
// seal signed.
func (s *Sealer) reportSealed(ctx context.Context, path string, res sealResult) {
	if res.newLog != "" {
		s.set.Logger.Info("integrity: started a new log", zap.String("path", path), zap.String("origin", res.newLog))
	}
	if s.set.Observer != nil && res.lines > 0 {
		s.set.Observer.LinesSealed(ctx, res.lines)
	}
	if res.checkpoint != nil {
		if s.set.Observer != nil {
			s.set.Observer.CheckpointWritten(ctx)
		}
	}
}

// logFor returns the sealer's memory of path, made on first use; called
// with sealMu held.
func (s *Sealer) logFor(path string) *fileLog {
	l := s.logs[path]
	if l == nil {
		l = &fileLog{path: path, keys: s.set.Keys, scratch: &s.scratch, ownTear: -1, syncAudit: s.set.syncAudit,
			beforeActive: s.set.beforeActive,
			origin:       originOf(s.set.Keys.Signer.Name(), path, s.set.OriginBase),
			rotation:     func(name string, done bool) (bool, bool) { return s.rotation(path, name, done) },
			reported:     func() []string { return s.reportedRotations(path) },
			sinkFile:     func() os.FileInfo { return s.sinkFile(path) },
			rotatedByOther: func(name string) {
				s.RotatedByOther(path, filepath.Join(filepath.Dir(path), name))
			}}
		s.logs[path] = l
	}
	return l
}

// forgetIdle drops remembered files beyond the bound, the ones just
// sealed (keep) last, and the broken ones never (so tampering is not
// logged again). A broken one beyond the bound lets its owner lock go, so
// the descriptors stay bounded too; a seal of it takes the lock again.
func (s *Sealer) forgetIdle(keep map[string]int64) {
	s.forget(func(path string) bool { _, ok := keep[path]; return !ok })
	s.forget(func(string) bool { return true })
	s.forgetWitnessed()
}

func (s *Sealer) forget(may func(path string) bool) {
	for path, l := range s.logs {
		if len(s.logs) <= maxIdleLogs {
			return
		}
		if !may(path) {
			continue
		}
		l.letGo()
		if l.broken == nil {
			delete(s.logs, path)
			s.forgetPath(path)
		}
	}
}

// dropRotations drops the rotations of path the sink reported: another
// collector seals the log, its segments with it, and the reports would
// wait for a seal of this process's that does not come.
func (s *Sealer) dropRotations(path string) {
	s.mu.Lock()
	delete(s.rotations, path)
	s.mu.Unlock()
}

// forgetPath drops what the sink's hooks recorded for path: a templated
// path makes one file per session, and the sealer remembers a bounded
// number. A rotation reported and not recorded yet is kept, with whether
// another writer rotates the path; without one, the path is then sealed
// as after a restart (see rotation).
func (s *Sealer) forgetPath(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sinkFiles, path)
	if len(s.rotations[path]) == 0 {
		delete(s.rotations, path)
		delete(s.rotatedByOthers, path)
	}
}

// letGo lets l's owner lock and open file go.
func (l *fileLog) letGo() {
	l.releaseOwner()
	l.forgetIdentity()
}

// releaseOwner lets l's owner lock go. Another sealer may then change the
// store: its next walk starts from the first hash.
func (l *fileLog) releaseOwner() {
	l.owner.Release()
	l.owner = nil
	l.mark = nil
}

// holdsLockOf reports whether the lock file at path's lock path is one
// this sealer holds for any file; called with sealMu held.
func (s *Sealer) holdsLockOf(path string) bool {
	at, err := os.Lstat(OwnerLockPath(path))
	if err != nil {
		return false
	}
	for _, l := range s.logs {
		if l.owner.holds(at) {
			return true
		}
	}
	return false
}

// own takes the owner lock of l's path unless held already (or left to
// the caller), and again when its file was removed or replaced; called
// with sealMu held. A file system without flock is warned about once per
// sealer (a templated path makes a file per session) and sealed without it.
func (s *Sealer) own(l *fileLog) error {
	if s.set.CallerOwns {
		return nil
	}
	if l.owner != nil {
		if !l.owner.Lost(l.path) || s.holdsLockOf(l.path) {
			return nil // a swap of two of its own files is the seal's to find
		}
		s.set.Logger.Warn("integrity: the owner lock file was removed or replaced while this collector held it; taking it again",
			zap.String("path", l.path), zap.String("lock", OwnerLockPath(l.path)))
		l.releaseOwner()
	}
	o, err := s.set.lockLog(l.path)
	if errors.Is(err, ErrLogOwned) {
		return fmt.Errorf("%w; a log has one sealer: stop the other collector, or give this exporter another file.path", err)
	}
	if err != nil {
		return err
	}
	if o.Unsupported && !s.noFlockWarned {
		s.noFlockWarned = true
		s.set.Logger.Warn("integrity: the file system has no flock: nothing keeps a second collector from sealing this log, "+
			"nor the other files of this exporter's path (warned once)",
			zap.String("path", l.path), zap.String("lock", OwnerLockPath(l.path)))
	}
	l.owner = o
	return nil
}
