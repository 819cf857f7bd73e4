package integrity

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"go.uber.org/zap"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// WitnessedSuffix names the sidecar of cosigned checkpoints: each record
// is a checkpoint with the log's signature and the witnesses' C2SP
// tlog-cosignature lines, in the checkpoints sidecar's record format.
const WitnessedSuffix = ".witnessed"

// WitnessedPath is the cosigned checkpoints sidecar of the audit file path.
func WitnessedPath(path string) string { return path + WitnessedSuffix }

// Witnesses gets checkpoints cosigned (witness.Pool implements it).
type Witnesses interface {
	// Cosign submits a signed checkpoint with a way to prove it
	// consistent with an older size, logs each witness that does not
	// cosign, and returns the cosignature lines received and whether
	// they reach the quorum.
	Cosign(ctx context.Context, path, origin string, n int64, signed []byte,
		prove func(old int64) (tlog.TreeProof, error)) (cosigs [][]byte, quorum bool)
	// Count is how many witnesses validly cosigned a signed note.
	Count(signed []byte) int
	// Quorum is how many cosignatures a checkpoint needs.
	Quorum() int
}

// witnessing is the sealer's memory of what the witnesses cosigned.
type witnessing struct {
	mu sync.Mutex
	// done is, per audit file, the size of the newest checkpoint cosigned
	// by the quorum and recorded in its witnessed sidecar.
	done map[string]int64
	// retry holds, per file whose newest checkpoint lacks the quorum,
	// that checkpoint: every round submits it again, written to or not,
	// without sealing the file again (a file written to is sealed, and
	// its newer checkpoint submitted). At most maxIdleLogs: a witness
	// that refuses every session of a templated path must not make each
	// round submit every file ever written.
	retry map[string]Checkpoint
	// retryFullWarned: the files beyond retry's bound were warned about,
	// once until retry empties.
	retryFullWarned bool
	// retired is, per file seen, why it is refused as a retired log (nil:
	// it is not one).
	retired map[string]error
	// recorded is, per file in retry, the checkpoint submitted and the
	// cosignature lines the witnessed sidecar holds for it, by witness
	// key: a round records it again only when another witness cosigns.
	recorded map[string]recordedCosigs
	// queued is, per file, the checkpoint the newest of the loop's rounds
	// sealed, while witnessLoop has not taken it: rounds sealed while a
	// witness round is in flight are submitted together once it ends.
	queued map[string]witnessed
	// wake tells witnessLoop that queued holds files (buffer of one).
	wake chan struct{}
}

type recordedCosigs struct {
	n     int64
	hash  tlog.Hash
	lines map[string][]byte
}

// queueRetries queues the files waiting for cosignatures for witnessLoop,
// each with the checkpoint submitted last, unless a round queued a newer
// one already.
func (s *Sealer) queueRetries() {
	if s.set.Witnesses == nil {
		return
	}
	s.enqueue(func(queued map[string]witnessed) bool {
		for p, c := range s.wit.retry {
			if _, newer := queued[p]; !newer {
				queued[p] = witnessed{path: p, last: c}
			}
		}
		return len(s.wit.retry) > 0
	})
}

// witnessed is a file's newest checkpoint when a round sealed it.
type witnessed struct {
	path string
	last Checkpoint
}

// newestLocked returns path's newest checkpoint; called with sealMu held.
func (s *Sealer) newestLocked(path string) witnessed {
	w := witnessed{path: path}
	if l := s.logs[path]; l != nil && l.hasLast {
		w.last = l.last
	}
	return w
}

// queueWitness hands the files a loop round sealed to witnessLoop, each
// with the checkpoint it left, a later round's replacing an earlier's.
func (s *Sealer) queueWitness(sealed []witnessed) {
	if s.set.Witnesses == nil || len(sealed) == 0 {
		return
	}
	s.enqueue(func(queued map[string]witnessed) bool {
		for _, w := range sealed {
			queued[w.path] = w
		}
		return true
	})
}

// enqueue lets add fill witnessLoop's queue under the lock, and wakes the
// loop when add reports it queued something.
func (s *Sealer) enqueue(add func(queued map[string]witnessed) bool) {
	s.wit.mu.Lock()
	if s.wit.queued == nil {
		s.wit.queued = map[string]witnessed{}
	}
	added := add(s.wit.queued)
	s.wit.mu.Unlock()
	if !added {
		return
	}
	select {
	case s.wit.wake <- struct{}{}:
	default: // woken already: it takes the whole queue
	}
}

// takeQueued empties the queue and returns its files, with sealed's
// (sealed since, so newer) in place of theirs.
func (s *Sealer) takeQueued(sealed []witnessed) []witnessed {
	s.wit.mu.Lock()
	queued := s.wit.queued
	s.wit.queued = nil
	s.wit.mu.Unlock()
	if len(queued) == 0 {
		return sealed
	}
	for _, w := range sealed {
		queued[w.path] = w
	}
	return slices.Collect(maps.Values(queued))
}

// witnessLoop submits the files the loop's rounds queue, one witness round
// at a time (witnessAll), until Close. The loop does not wait for it: a
// witness that is slow or hangs delays cosignatures, not seals. Rounds
// sealed meanwhile are coalesced: each file once, with its newest good
// checkpoint (toSubmit).
func (s *Sealer) witnessLoop(roundCtx context.Context) {
	defer close(s.witnessEnded)
	for {
		select {
		case <-s.stop:
			return
		case <-s.wit.wake:
		}
		if roundCtx.Err() != nil {
			return // Close submits what is queued
		}
		ctx, cancel := context.WithTimeout(roundCtx, s.roundTimeout())
		s.witnessAll(ctx, s.takeQueued(nil))
		cancel()
	}
}

// witnessAll submits the newest checkpoints of the files a round sealed
// to the witnesses. It holds witnessMu, not sealMu: a new file's first
// checkpoint (SealNew) and the next seals do not wait for a witness that
// is slow or hangs. One round's requests at a time, each with the newest
// checkpoint a good seal of the file left when it is submitted, so a
// witness never sees a file's checkpoints out of order, nor one a seal
// refused. After Close it submits nothing.
func (s *Sealer) witnessAll(ctx context.Context, sealed []witnessed) {
	// A checkpoint of 0 lines is not submitted: a seal that makes only
	// that one (a new log) does not wait for the round's requests.
	sealed = slices.DeleteFunc(sealed, func(w witnessed) bool { return w.last.N == 0 })
	if s.set.Witnesses == nil || len(sealed) == 0 {
		return
	}
	s.witnessMu.Lock()
	defer s.witnessMu.Unlock()
	for _, w := range sealed {
		last, ok := s.toSubmit(w)
		if !ok {
			return
		}
		s.witness(ctx, w.path, last)
	}
	// The round's seals forgot idle files before these sizes were added.
	s.sealMu.Lock()
	defer s.sealMu.Unlock()
	s.forgetWitnessed()
}

// toSubmit returns the newest checkpoint of w's file that a good seal
// left: the one a later seal signed when newer, else w's. Not the log's
// newest read: a seal that read a checkpoint and then refused the file
// (one the key's holder appended) leaves it there. ok is false after Close.
func (s *Sealer) toSubmit(w witnessed) (last Checkpoint, ok bool) {
	s.sealMu.Lock()
	defer s.sealMu.Unlock()
	if s.closed {
		return Checkpoint{}, false
	}
	if l := s.logs[w.path]; l != nil && l.hasSigned && l.signed.N > w.last.N {
		return l.signed, true
	}
	return w.last, true
}

// witness submits the checkpoint last of path to the witnesses unless the
// quorum cosigned it already, and records what they return. A witness
// that refuses is logged by Witnesses; the checkpoint stays in the
// checkpoints sidecar either way, and the next round submits it again.
// Called with witnessMu held, not sealMu.
func (s *Sealer) witness(ctx context.Context, path string, last Checkpoint) {
	ws := s.set.Witnesses
	if last.N == 0 {
		return
	}
	if dirGone(path) {
		s.forgetGone(path, last)
		return
	}
	done, ok := s.witnessDone(path)
	if !ok {
		done = s.loadWitnessed(path, last)
	}
	if done >= last.N {
		s.setWitnessed(path, done, last, true)
		return
	}
	signed, err := SignCheckpoint(last, s.set.Keys.Signer)
	if err != nil {
		s.set.Logger.Error("integrity: checkpoint not submitted to witnesses", zap.String("path", path), zap.Error(err))
		return
	}
	prove := func(old int64) (tlog.TreeProof, error) {
		// Under sealMu: a seal may repair or rebuild the store.
		s.sealMu.Lock()
		defer s.sealMu.Unlock()
		return proveFromStore(path, last.N, old)
	}
	cosigs, quorum := ws.Cosign(ctx, path, last.Origin, last.N, signed, prove)
	if merged := s.newCosigs(path, last, cosigs); merged.lines != nil {
		all := slices.Collect(maps.Values(merged.lines))
		slices.SortFunc(all, bytes.Compare)
		err := appendWitnessed(path, signed, all)
		if err != nil && dirGone(path) {
			s.forgetGone(path, last)
			return
		}
		if err != nil {
			s.set.Logger.Error("integrity: cosignatures received but not recorded (the checkpoint is submitted again)",
				zap.String("path", path), zap.Error(err))
			quorum = false
		} else {
			s.setRecorded(path, merged)
			quorum = quorum || ws.Count(append(bytes.Clone(signed), bytes.Join(all, nil)...)) >= ws.Quorum()
		}
	}
	if quorum {
		s.setWitnessed(path, last.N, last, true)
		return
	}
	s.setWitnessed(path, done, last, false)
}

// dirGone reports whether the directory of path was removed: nothing can
// be recorded beside the file any more.
func dirGone(path string) bool {
	_, err := os.Lstat(filepath.Dir(path))
	return errors.Is(err, fs.ErrNotExist)
}

// forgetGone forgets path, whose directory was removed, with the
// checkpoint last waiting for cosignatures: submitted every round, it
// would be logged every round and hold a place among the files waiting.
// Forgotten, it is logged once.
func (s *Sealer) forgetGone(path string, last Checkpoint) {
	s.wit.mu.Lock()
	s.wit.dropRetryLocked(path)
	delete(s.wit.done, path)
	s.wit.mu.Unlock()
	s.set.Logger.Warn("integrity: the directory of a file whose checkpoint waits for the witnesses' cosignatures was removed; "+
		"the checkpoint is no longer submitted", zap.String("path", path), zap.Int64("size", last.N))
}

// newCosigs merges a round's cosignature lines into those recorded for
// path's checkpoint last. It returns the merged lines when a witness
// cosigned last for the first time, else lines nil: nothing new to record.
func (s *Sealer) newCosigs(path string, last Checkpoint, cosigs [][]byte) recordedCosigs {
	s.wit.mu.Lock()
	defer s.wit.mu.Unlock()
	merged := recordedCosigs{n: last.N, hash: last.Hash, lines: map[string][]byte{}}
	if prev, ok := s.wit.recorded[path]; ok && prev.n == last.N && prev.hash == last.Hash {
		maps.Copy(merged.lines, prev.lines)
	}
	grew := false
	for _, c := range cosigs {
		if id := cosigner(c); merged.lines[id] == nil {
			merged.lines[id], grew = c, true
		}
	}
	if !grew {
		merged.lines = nil
	}
	return merged
}

func (s *Sealer) setRecorded(path string, r recordedCosigs) {
	s.wit.mu.Lock()
	defer s.wit.mu.Unlock()
	if s.wit.recorded == nil {
		s.wit.recorded = map[string]recordedCosigs{}
	}
	s.wit.recorded[path] = r
}

// cosigner names the key a cosignature line is by: its name and key hash.
func cosigner(line []byte) string {
	f := strings.Fields(string(line))
	if len(f) == 3 {
		if sig, err := base64.StdEncoding.DecodeString(f[2]); err == nil && len(sig) >= 4 {
			return KeyID(f[1], binary.BigEndian.Uint32(sig))
		}
	}
	return string(line)
}

func (s *Sealer) witnessDone(path string) (int64, bool) {
	s.wit.mu.Lock()
	defer s.wit.mu.Unlock()
	n, ok := s.wit.done[path]
	return n, ok
}

// setWitnessed records the newest size the quorum cosigned for path, and
// whether nothing newer waits: else last, the checkpoint submitted, waits.
func (s *Sealer) setWitnessed(path string, n int64, last Checkpoint, upToDate bool) {
	s.wit.mu.Lock()
	defer s.wit.mu.Unlock()
	if s.wit.done == nil {
		s.wit.done, s.wit.retry = map[string]int64{}, map[string]Checkpoint{}
	}
	s.wit.done[path] = n
	switch {
	case upToDate:
		s.wit.dropRetryLocked(path)
	case len(s.wit.retry) < maxIdleLogs || hasKey(s.wit.retry, path):
		s.wit.retry[path] = last
	default:
		// Submitted again when the file is next written to.
		delete(s.wit.recorded, path)
		if !s.wit.retryFullWarned {
			s.wit.retryFullWarned = true
			s.set.Logger.Warn(fmt.Sprintf("integrity: %d files wait for the witnesses' cosignatures; the checkpoints of more "+
				"are no longer submitted again every round, only when their file is next written to (warned once)", maxIdleLogs),
				zap.String("path", path))
		}
	}
}

// dropRetryLocked forgets path's checkpoint waiting for cosignatures, and
// once none waits, that the bound was warned about; called with mu held.
func (w *witnessing) dropRetryLocked(path string) {
	delete(w.retry, path)
	delete(w.recorded, path)
	if len(w.retry) == 0 {
		w.retryFullWarned = false
	}
}

// forgetWitnessed forgets the cosigned sizes of idle files beyond the
// bound (read again from the witnessed sidecar when next needed); called
// with sealMu held.
func (s *Sealer) forgetWitnessed() {
	s.wit.mu.Lock()
	defer s.wit.mu.Unlock()
	for p := range s.wit.done {
		if len(s.wit.done) <= maxIdleLogs {
			break
		}
		if _, kept := s.logs[p]; !kept && !hasKey(s.wit.retry, p) {
			delete(s.wit.done, p)
		}
	}
}

// loadWitnessed returns last's size when the witnessed sidecar records it
// cosigned by the quorum (so a restart does not submit it again), else 0.
func (s *Sealer) loadWitnessed(path string, last Checkpoint) int64 {
	f, err := openNoFollow(WitnessedPath(path), os.O_RDONLY|noFollow, 0)
	if err != nil {
		return 0
	}
	defer func() { _ = f.Close() }()
	want := last.Format()
	nr := newWitnessedReader(f)
	for {
		rec, err := nr.Next()
		if err != nil {
			return 0
		}
		text, _, _ := bytes.Cut(rec, []byte("\n\n"))
		if bytes.Equal(append(text, '\n'), want) && s.set.Witnesses.Count(rec) >= s.set.Witnesses.Quorum() {
			return last.N
		}
	}
}

// AppendWitnessed appends a checkpoint with its cosignature lines to the
// witnessed sidecar of path.
func AppendWitnessed(path string, signed []byte, cosigs [][]byte) error {
	return appendWitnessed(path, signed, cosigs)
}

// ProveFromStore proves the tree of size n consistent with the tree of
// size old from the hash store of the audit file at path.
func ProveFromStore(path string, n, old int64) (tlog.TreeProof, error) {
	return proveFromStore(path, n, old)
}

// appendWitnessed appends signed with the cosignature lines to the
// witnessed sidecar, synced.
func appendWitnessed(path string, signed []byte, cosigs [][]byte) error {
	f, err := openNoFollow(WitnessedPath(path), os.O_WRONLY|os.O_CREATE|os.O_APPEND|noFollow, 0o600)
	if err != nil {
		return fmt.Errorf("open witnessed sidecar: %w", err)
	}
	rec := append(bytes.Clone(signed), bytes.Join(cosigs, nil)...)
	return writeSynced(f, AppendRecord(nil, rec), "append to witnessed sidecar", "sync witnessed sidecar")
}

// proveFromStore proves the tree of size n consistent with the tree of
// size old from the file's hash store.
func proveFromStore(path string, n, old int64) (tlog.TreeProof, error) {
	f, err := openNoFollow(StorePath(path), os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, fmt.Errorf("open hash store: %w", err)
	}
	defer func() { _ = f.Close() }()
	return tlog.ProveTree(n, old, storeFileReader{f})
}

// storeFileReader reads stored hashes from a hash store file.
type storeFileReader struct{ f *os.File }

func (r storeFileReader) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, idx := range indexes {
		if _, err := r.f.ReadAt(out[i][:], idx*tlog.HashSize); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("read hash store at index %d: %w", idx, err)
		}
	}
	return out, nil
}

// OpenWitnessed verifies one witnessed record: the log's signature by
// logKey, and the checkpoint it carries; the cosignatures are counted by
// the caller with the witness keys it trusts. The record may be larger
// than a checkpoint note (maxWitnessedBytes): its cosignature lines.
func OpenWitnessed(rec []byte, logKey note.Verifier) (Checkpoint, error) {
	return openCheckpoint(rec, logKey, "cosigned checkpoint", maxWitnessedBytes)
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}
