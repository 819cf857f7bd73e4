package spool

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// DefaultMaxLineBytes bounds a line Replay holds in memory when
// Options.MaxLineBytes is 0: well above any event a pipeline passes, so a
// longer one is damage (a region without newlines), quarantined rather
// than read.
const DefaultMaxLineBytes = 256 << 20

// DamageKind says what damage a running spool found and mended.
type DamageKind string

const (
	// DamageLine: a line that fails Options.Check (torn, garbage, bytes
	// inserted) or is longer than Options.MaxLineBytes was moved to the
	// quarantine file, and replay went on with the next line.
	DamageLine DamageKind = "bad_line"
	// DamageResized: something other than the spool changed the file's
	// size, or tore its last line; the last line was closed with a
	// newline before anything else was appended.
	DamageResized DamageKind = "resized"
	// DamageSidecar: the .offset sidecar was missing and was written
	// again.
	DamageSidecar DamageKind = "sidecar_missing"
	// DamageRemoved: the spool file was removed or renamed; its pending
	// lines were written to a new file at the spool's path.
	DamageRemoved DamageKind = "file_removed"
)

// Damage is one piece of damage found while running, for the caller to log
// and count. Nothing in it quotes the file's content.
type Damage struct {
	Kind DamageKind
	// Offset and Bytes locate the damage in the spool file: the bad line,
	// or the file's old size and how far it moved (negative: cut).
	Offset, Bytes int64
	// Reason says what was wrong, never with the bytes themselves.
	Reason string
	// Kept is where a bad line was saved ("" when it could not be; Reason
	// then says why).
	Kept string
}

// SetDamageHandler makes fn hear of damage found from now on. fn runs
// while the spool is locked: it must return quickly and must not call the
// Spool.
func (s *Spool) SetDamageHandler(fn func(Damage)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onDamage = fn
}

// reportLocked passes d to the damage handler; mu is held.
func (s *Spool) reportLocked(d Damage) {
	if s.onDamage != nil {
		s.onDamage(d)
	}
}

func (s *Spool) report(d Damage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reportLocked(d)
}

// reconcileLocked brings the spool in line with a file something else
// changed: cut, grown by inserted bytes, or with its last newline gone. A
// torn last line is closed with a newline, so the next append is not merged
// into it (the torn line then fails Check on replay and is quarantined),
// and end follows the file's size; ack too, if the file was cut below it.
// It returns the file's fstat, for the path check that follows it.
// Called with mu held, before each append and each replay round.
func (s *Spool) reconcileLocked() (os.FileInfo, error) {
	fi, err := s.f.Stat()
	if err != nil {
		return nil, fmt.Errorf("spool %s: stat: %w", s.path, err)
	}
	size := fi.Size()
	torn, err := fsutil.EndsTorn(s.f, size)
	if err != nil {
		return nil, fmt.Errorf("spool %s: read its last byte: %w", s.path, err)
	}
	if size == s.end && !torn {
		return fi, nil
	}
	reason := fmt.Sprintf("the file changed outside the spool: %d bytes, expected %d", size, s.end)
	s.changes++ // a replay round's byte positions are in doubt
	if torn {
		if _, err := s.writeFn(s.f, []byte{'\n'}); err != nil {
			return nil, fmt.Errorf("spool %s: close a torn last line: %w", s.path, err)
		}
		if err := s.syncFn(s.f); err != nil {
			return nil, fmt.Errorf("spool %s: sync: %w", s.path, err)
		}
		size++
		reason += "; its torn last line was closed with a newline"
	}
	// Lines removed (or bytes inserted) before ack in place: lines not
	// delivered may now lie below it, or the file be shorter than ack
	// without having been cut. Resend rather than skip.
	// (The head is compared as found, before a torn line was closed.)
	edited := s.ack > size && !headKept(s.f, s.head, fi.Size()) || s.ack <= size && !s.ackTail.matches(s.f, s.ack)
	switch {
	case edited:
		reason += fmt.Sprintf("; the bytes before the acknowledged offset %d changed, so replay starts again from the first line (duplicates possible)", s.ack)
		s.ack, s.ackCut, s.ackTail = 0, true, tail{}
	case s.ack > size:
		s.ack, s.ackCut = size, true
		s.ackTail = tailOf(s.f, size)
	}
	s.head = headOf(s.f, size)
	s.reportLocked(Damage{Kind: DamageResized, Offset: s.end, Bytes: size - s.end, Reason: reason})
	s.end = size
	return fi, nil
}

// quarantine copies the n bytes at off of f, a bad line, to the
// quarantine file beside the spool and returns its path. The file is
// bounded like the spool (MaxSize): a line that would take it past that is
// not kept.
func (s *Spool) quarantine(f *os.File, off, n int64) (string, error) {
	// One line per bad line: a newline is added when it has none.
	torn, err := fsutil.EndsTorn(f, off+n)
	if err != nil {
		torn = true
	}
	kept := n
	if torn {
		kept++
	}
	q, fi, err := openFile(s.quarantinePath, os.O_WRONLY|os.O_CREATE|os.O_APPEND)
	if err != nil {
		return "", err
	}
	if s.maxSize > 0 && fi.Size()+kept > s.maxSize {
		_ = q.Close()
		return "", fmt.Errorf("the quarantine file would exceed the spool's max size %d", s.maxSize)
	}
	_, err = io.Copy(q, io.NewSectionReader(f, off, n))
	if err == nil && torn {
		_, err = q.Write([]byte{'\n'})
	}
	if err == nil {
		err = q.Sync()
	}
	if cerr := q.Close(); err == nil {
		err = cerr
	}
	if err == nil && fi.Size() == 0 {
		err = fsutil.SyncDir(filepath.Dir(s.quarantinePath))
	}
	if err != nil {
		return "", err
	}
	return s.quarantinePath, nil
}

// checkSidecar writes the sidecar again when it is gone, so a restart
// finds a spool and not a file it must refuse, and reports it once per
// disappearance. Called with replayMu held.
func (s *Spool) checkSidecar() {
	_, err := os.Lstat(s.offsetPath)
	if !errors.Is(err, os.ErrNotExist) {
		s.sidecarGone = false
		return
	}
	s.mu.Lock()
	ino, ack, at := s.ino, s.ack, s.ackTail
	s.mu.Unlock()
	werr := writeOffset(s.offsetPath, offsetRecord{Inode: ino, Offset: ack, Tail: at.String()})
	if s.sidecarGone && werr != nil {
		return // reported already
	}
	s.sidecarGone = werr != nil
	reason := "the .offset sidecar was missing; written again with the acknowledged offset"
	if werr != nil {
		reason = fmt.Sprintf("the .offset sidecar is missing and could not be written again: %v", werr)
	}
	s.report(Damage{Kind: DamageSidecar, Offset: ack, Reason: reason})
}
