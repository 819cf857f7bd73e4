package spool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/lines"
)

// readBufferSize bounds the read-ahead of Replay. Lines longer than this
// still work: lines.Reader assembles them in a separate buffer.
const readBufferSize = 64 << 10

// SendFunc delivers a batch of whole lines. batch is only valid during the
// call (Replay reuses it). Returning nil acknowledges the batch.
type SendFunc func(ctx context.Context, batch []byte, lines int) error

// AckedSendFunc is a SendFunc that may deliver its batch in parts: it calls
// ack with the prefix of the batch settled so far (bytes, whole lines, and
// lines), which ReplayAcked acknowledges and saves at once. So a crash in
// the middle of a long send, or a failure of a later part, resends only
// what was not settled, not the parts already taken. ack, like batch, is
// valid only during the call.
type AckedSendFunc func(ctx context.Context, batch []byte, lines int, ack func(bytes, lines int)) error

// Replay is ReplayAcked with a send that acknowledges only whole batches.
func (s *Spool) Replay(ctx context.Context, maxBatchLines, maxBatchBytes int, send SendFunc) (int, error) {
	if send == nil {
		return s.ReplayAcked(ctx, maxBatchLines, maxBatchBytes, nil)
	}
	return s.ReplayAcked(ctx, maxBatchLines, maxBatchBytes,
		func(ctx context.Context, batch []byte, lines int, _ func(int, int)) error {
			return send(ctx, batch, lines)
		})
}

// ReplayAcked streams the pending lines, in order, to send in batches of at most
// maxBatchLines lines and maxBatchBytes bytes (a single line larger than
// maxBatchBytes is sent alone). After each successful send, and each part
// the send acknowledges, the acknowledged offset is advanced and persisted. On the first send error Replay stops and
// returns it; the unsent lines stay for the next call. It returns how many
// lines were acknowledged. Trouble saving the offset or trimming the file
// is not a delivery failure: Upkeep reports it, and the next call retries.
//
// Replay reads up to the size it saw when it started; lines appended
// meanwhile are left for the next call. When everything is acknowledged the
// file is emptied, and when a large acknowledged prefix is more than half
// the file it is compacted away; lines appended during either are kept.
//
// Memory stays bounded by the read buffer, maxBatchBytes and the longest
// line, however large the spool is.
func (s *Spool) ReplayAcked(ctx context.Context, maxBatchLines, maxBatchBytes int, send AckedSendFunc) (int, error) {
	if maxBatchLines <= 0 || maxBatchBytes <= 0 || send == nil {
		return 0, fmt.Errorf("spool %s: replay needs positive batch limits and a send function", s.path)
	}
	s.replayMu.Lock()
	defer s.replayMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return 0, ErrClosed
	}
	own, err := s.reconcileLocked()
	if err == nil {
		// A path that names something else (or a file that could not be
		// written again) does not hold the open file's lines back: a
		// restart would not find them. maintain reports it.
		_ = s.followPathLocked(own)
	}
	f, start, end, changes := s.f, s.ack, s.end, s.changes
	s.mu.Unlock()
	if err != nil {
		return 0, err
	}
	s.checkSidecar()

	st := &streamer{s: s, f: f, send: send, pos: start, changes: changes, batch: make([]byte, 0, min(maxBatchBytes, 1<<20))}
	sent, err := st.stream(ctx, end, maxBatchLines, maxBatchBytes)
	s.upkeep = s.maintain() // the lines are safe either way
	return sent, err
}

// maxRestarts bounds how often one round starts reading again after the
// file changed under it.
const maxRestarts = 4

type streamer struct {
	s     *Spool
	f     *os.File // the file the round reads
	send  AckedSendFunc
	pos   int64 // offset of the first byte not yet acknowledged
	batch []byte
	lines int
	sent  int
	// changes is the spool's count of files found changed outside it
	// when the round read from pos. moved: it is no longer (an append
	// found the file edited or cut while the round sent), so the bytes
	// the round read no longer say where the lines are. Nothing more is
	// acknowledged from pos; the round reads on from the offset.
	changes uint64
	moved   bool
}

// errOffsetMoved ends a round's reading when the file changed under it
// (see streamer.moved).
var errOffsetMoved = errors.New("the spool file changed under the round")

// stream sends the lines between start and end. The recorded end is always
// just past a newline, so a line without one means the file changed under
// the round (cut, or bytes inserted before end): the round mends the spool
// (reconcileLocked) and reads on from that line.
func (st *streamer) stream(ctx context.Context, end int64, maxLines, maxBytes int) (int, error) {
	s := st.s
	for restarts := 0; st.pos < end; restarts++ {
		torn, err := st.read(ctx, st.f, end, maxLines, maxBytes)
		if errors.Is(err, errOffsetMoved) {
			torn, err = true, nil
		}
		if err != nil || !torn {
			return st.sent, err
		}
		if restarts == maxRestarts {
			return st.sent, fmt.Errorf("spool %s: the file keeps changing under replay", s.path)
		}
		s.mu.Lock()
		_, err = s.reconcileLocked()
		st.pos, end, st.changes = s.ack, s.end, s.changes
		s.mu.Unlock()
		st.batch, st.lines, st.moved = st.batch[:0], 0, false
		if err != nil {
			return st.sent, err
		}
	}
	return st.sent, nil
}

// read sends the lines from st.pos to end, quarantining those that fail
// vet. torn is set when it stopped at a line without a newline, with every
// line before it sent.
func (st *streamer) read(ctx context.Context, f *os.File, end int64, maxLines, maxBytes int) (torn bool, err error) {
	s := st.s
	lr := lines.NewReader(io.NewSectionReader(f, st.pos, end-st.pos), readBufferSize, s.maxLine)
	for {
		ln, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, fmt.Errorf("spool %s: read: %w", s.path, err)
		}
		if !ln.Newline {
			return true, st.flush(ctx)
		}
		if reason := s.vet(ln); reason != "" {
			if err := st.flush(ctx); err != nil {
				return false, err
			}
			st.setAside(f, ln.Size, reason)
			continue
		}
		line := ln.Bytes()
		if len(line) > maxBytes {
			if err := st.flush(ctx); err != nil {
				return false, err
			}
			if err := st.deliver(ctx, line, 1); err != nil {
				return false, err
			}
			continue
		}
		if st.lines > 0 && (st.lines >= maxLines || len(st.batch)+len(line) > maxBytes) {
			if err := st.flush(ctx); err != nil {
				return false, err
			}
		}
		st.batch = append(st.batch, line...)
		st.lines++
	}
	return false, st.flush(ctx)
}

// setAside moves the n-byte line at st.pos, which failed vet, to the
// quarantine file, reports it and acknowledges it, so replay goes on with
// the next line. A line that cannot be kept (a full disk) is passed over
// all the same: holding it would hold every line behind it.
func (st *streamer) setAside(f *os.File, n int64, reason string) {
	kept, err := st.s.quarantine(f, st.pos, n)
	if err != nil {
		reason = fmt.Sprintf("%s; not kept: %v", reason, err)
	}
	st.s.report(Damage{Kind: DamageLine, Offset: st.pos, Bytes: n, Reason: reason, Kept: kept})
	st.acknowledge(n, 0, nil)
}

func (st *streamer) flush(ctx context.Context) error {
	if st.lines == 0 {
		return nil
	}
	if err := st.deliver(ctx, st.batch, st.lines); err != nil {
		return err
	}
	st.batch, st.lines = st.batch[:0], 0
	return nil
}

// deliver sends one batch and acknowledges it durably.
func (st *streamer) deliver(ctx context.Context, batch []byte, lines int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if st.moved {
		return errOffsetMoved
	}
	doneBytes, doneLines := 0, 0
	ack := func(bytes, lines int) {
		// Only a longer prefix that ends a line moves the offset.
		if bytes > doneBytes && bytes <= len(batch) && batch[bytes-1] == '\n' && lines >= doneLines {
			st.acknowledge(int64(bytes-doneBytes), lines-doneLines, batch[:bytes])
			doneBytes, doneLines = bytes, lines
		}
	}
	if err := st.send(ctx, batch, lines, ack); err != nil {
		return err
	}
	ack(len(batch), lines)
	if st.moved {
		return errOffsetMoved
	}
	return nil
}

// acknowledge moves the acknowledged offset n bytes (lines lines) on,
// unless the file changed outside the spool meanwhile: the offset is then
// where the spool put it, and pos+n could be past lines never sent. sent
// are the bytes sent up to the new offset, nil when none (sentTail).
func (st *streamer) acknowledge(n int64, lines int, sent []byte) {
	st.sent += lines // the endpoint has them either way
	if st.moved || !st.s.unchangedSince(st.changes) {
		st.moved = true
		return
	}
	next := st.pos + n
	at := sentTail(st.f, next, sent)
	// The endpoint has the batch, so memory moves on even when the sidecar
	// cannot be written (a full disk): held back, the same batch would go
	// out again every round and the file, never trimmed, keep the disk full.
	// The sidecar stays behind (a restart resends from it, at-least-once)
	// until a later write catches it up.
	st.s.saveOffset(next, at)
	st.s.mu.Lock()
	// Changed between the check and here: the sidecar may now hold next,
	// but the spool writes it again (ackCut) if it moved the offset.
	st.moved = st.s.changes != st.changes
	if !st.moved {
		st.s.ack, st.s.ackTail = next, at
	}
	st.s.mu.Unlock()
	st.pos = next
}

// unchangedSince reports whether the spool has found no file changed
// outside it since its count of them was changes.
func (s *Spool) unchangedSince(changes uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changes == changes
}

// saveOffset saves off in the sidecar and reports whether it could; when
// it cannot, offsetBehind says why (what Upkeep reports).
func (s *Spool) saveOffset(off int64, at tail) bool {
	s.offsetBehind = nil
	if err := s.persistOffset(off, at); err != nil {
		s.offsetBehind = fmt.Errorf("spool %s: acknowledged offset %d not saved: %w", s.path, off, err)
		return false
	}
	return true
}

// persistOffset saves off, with the tail of the file before it.
func (s *Spool) persistOffset(off int64, at tail) error {
	s.mu.Lock()
	ino := s.ino
	s.mu.Unlock()
	return writeOffset(s.offsetPath, offsetRecord{Inode: ino, Offset: off, Tail: at.String()})
}

// maintain empties the file when everything is acknowledged, or compacts
// it when the acknowledged prefix is large, and returns why that failed.
// Called with replayMu held.
func (s *Spool) maintain() error {
	s.mu.Lock()
	// A file removed during the round is written again before appends,
	// refused meanwhile, resume.
	own, err := s.f.Stat()
	if err != nil {
		err = fmt.Errorf("spool %s: stat: %w", s.path, err)
	} else {
		err = s.followPathLocked(own)
	}
	if err != nil {
		s.mu.Unlock()
		return err
	}
	ack, end, at := s.ack, s.end, s.ackTail
	if s.ackCut {
		s.ackCut, s.sidecarStale = false, true
	}
	s.mu.Unlock()
	trim := end > 0 && ack == end
	compact := ack > s.compactBytes && ack > end/2
	// A sidecar naming a replaced file's inode must be corrected before
	// another file is created, which could reuse that inode number. One
	// that is only behind does not stop the rewrite, which is what frees a
	// full disk (and then saves offset 0 of the new file).
	s.catchUpSidecar(ack, at)
	if s.sidecarStale || !trim && !compact {
		return nil
	}
	if err := s.rewrite(); err != nil {
		return fmt.Errorf("spool %s: rewrite without acknowledged lines: %w", s.path, err)
	}
	return nil
}

// catchUpSidecar saves ack when the sidecar is behind it or names a file
// that was replaced, so a round with nothing to send still mends them. A
// failure stays in offsetBehind.
func (s *Spool) catchUpSidecar(ack int64, at tail) {
	if (s.sidecarStale || s.offsetBehind != nil) && s.saveOffset(ack, at) {
		s.sidecarStale = false
	}
}

// rewrite replaces the spool file by one holding only the unacknowledged
// lines (none, for a trim), keeping lines appended meanwhile.
//
// Crash safety: the new file is fully written and synced under a temporary
// name, then renamed over the spool (atomic), the directory synced, and
// only then the sidecar updated to (new inode, 0). A crash before the
// rename leaves the old file and its valid sidecar; a crash after it leaves
// a sidecar naming the old inode, which Open resolves to offset 0 of the new
// file — exactly its unacknowledged lines. Nothing is lost or resent.
func (s *Spool) rewrite() error {
	s.mu.Lock()
	f, ack, end := s.f, s.ack, s.end
	s.mu.Unlock()

	// Copy the bulk without blocking Append...
	tmp, err := s.startCompact(f, ack, end)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			s.dropCompact(tmp)
		}
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	// ...then, with Append held off, whatever arrived meanwhile.
	ino, err := s.finishCompactLocked(tmp, f, end)
	if err != nil {
		return err
	}
	if err := s.renameCompactLocked(tmp); err != nil {
		return err
	}
	done = true
	return s.adoptCompactLocked(tmp, ino, s.end-ack)
}

// startCompact creates the temporary file of a rewrite, locked as the
// spool's data, and copies f's bytes from ack to end into it.
func (s *Spool) startCompact(f *os.File, ack, end int64) (*os.File, error) {
	tmp, _, err := openFile(s.compactPath, os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND)
	if err != nil {
		return nil, err
	}
	if err := lockData(tmp, s.path); err != nil {
		s.dropCompact(tmp)
		return nil, err
	}
	if _, err := io.Copy(tmp, io.NewSectionReader(f, ack, end-ack)); err != nil {
		s.dropCompact(tmp)
		return nil, err
	}
	return tmp, nil
}

// dropCompact closes and removes a rewrite's temporary file, not renamed.
func (s *Spool) dropCompact(tmp *os.File) {
	_ = tmp.Close()
	_ = os.Remove(s.compactPath)
}

// finishCompactLocked copies what f got past end into tmp and syncs it,
// and returns tmp's inode. Called with mu held.
func (s *Spool) finishCompactLocked(tmp, f *os.File, end int64) (uint64, error) {
	if s.end > end {
		if _, err := io.Copy(tmp, io.NewSectionReader(f, end, s.end-end)); err != nil {
			return 0, err
		}
	}
	if err := tmp.Sync(); err != nil {
		return 0, err
	}
	return inode(tmp)
}

// renameCompactLocked renames tmp over the spool. Called with mu held.
func (s *Spool) renameCompactLocked(tmp *os.File) error {
	// The rename goes by name: a file planted at the temporary name before
	// it would become the spool in silence, its lines replayed after a
	// restart. Only the directory's writers can plant one, and they could
	// replace the spool itself as well; the checks make either show.
	if !namesFile(s.lstatFn, s.compactPath, tmp) {
		return fmt.Errorf("%s was replaced while the spool was written into it; the spool file is kept as it was", s.compactPath)
	}
	return os.Rename(s.compactPath, s.path)
}

// adoptCompactLocked makes tmp, renamed over the spool with pending bytes
// and inode ino, the spool's file, and saves its start offset once the
// rename is durable. Called with mu held.
func (s *Spool) adoptCompactLocked(tmp *os.File, ino uint64, pending int64) error {
	s.takeFileLocked(tmp, ino, pending) // the old file was renamed over
	if !namesFile(s.lstatFn, s.path, tmp) {
		// The open file holds the lines; appends are refused as for a
		// path taken by another file (pathGoneLocked).
		return fmt.Errorf("spool %s, renamed into place from %s, %w", s.path, s.compactPath, errPathTaken)
	}
	if err := fsutil.SyncDir(filepath.Dir(s.path)); err != nil {
		s.sidecarStale = true
		return err
	}
	return s.saveStartOffsetLocked()
}

// namesFile reports whether the name (not followed, through lstat) is the
// open file f.
func namesFile(lstat func(string) (os.FileInfo, error), name string, f *os.File) bool {
	at, err := lstat(name)
	if err != nil {
		return false
	}
	own, err := f.Stat()
	return err == nil && os.SameFile(at, own)
}

// takeFileLocked makes nf, with inode ino, the spool's file in place of the
// open one, which is closed: nf is at the spool's path and holds the
// pending bytes from its start. Called with mu held.
func (s *Spool) takeFileLocked(nf *os.File, ino uint64, pending int64) {
	_ = s.f.Close() // no longer at the path; nothing more is read from or written to it
	s.f, s.ino, s.end, s.ack, s.ackTail = nf, ino, pending, 0, tail{}
	s.head = headOf(nf, pending)
}

// saveStartOffsetLocked saves offset 0 of the file takeFileLocked took.
// Until it is saved the sidecar names the old inode, so Open replays the
// new file from its start, which is right; it is marked stale, and the next
// round saves it. Called with mu held.
func (s *Spool) saveStartOffsetLocked() error {
	if err := writeOffset(s.offsetPath, offsetRecord{Inode: s.ino, Offset: 0}); err != nil {
		s.sidecarStale = true
		return err
	}
	s.offsetBehind = nil
	return nil
}

// Upkeep is why the last Replay could not save the acknowledged offset
// after its last batch, or trim or compact the file, or nil. The spool goes
// on from the offset in memory; only a restart before the sidecar catches
// up resends lines (at-least-once). A file not trimmed keeps its disk
// space until a later Replay (one with nothing to send does the upkeep)
// manages it.
func (s *Spool) Upkeep() error {
	s.replayMu.Lock()
	defer s.replayMu.Unlock()
	return errors.Join(s.offsetBehind, s.upkeep)
}
