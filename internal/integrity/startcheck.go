package integrity

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
)

// ErrNoHistory is wrapped by the error for an audit file that holds lines
// but has no signed history at all: its sidecars were removed, or it was
// put in the path from elsewhere. Sealing it would start a new log over
// lines nobody signed, so that is left to an explicit operator action
// (`sandboxaudit log reset`).
var ErrNoHistory = errors.New("has no signed history")

// SealAtStart is Seal for the collector's start: a path that holds lines
// (in its file or in closed segments) while none of its sidecars holds
// anything is refused with ErrNoHistory instead of being sealed as a new
// log, unless a handover's note waits there (CheckHistory). Its newest checkpoint is queued for the witnesses (witnessLoop,
// once Start runs, or Close), not submitted: a witness that hangs must not
// hold up the collector's start, nor its receivers.
func (s *Sealer) SealAtStart(ctx context.Context, path string) error {
	defer s.keepIdleBound(path)
	if err := s.ownAtStart(path); err != nil {
		return err
	}
	err := CheckHistory(path)
	if err == nil {
		err = checkHandoverNote(path)
	}
	if err == nil {
		err = s.checkSegmentsAtStart(path)
	}
	if err != nil {
		s.set.Logger.Error("integrity: file not sealed", zap.String("path", path), zap.Error(err))
		s.refuse(path, err)
		return err
	}
	w, err := s.sealOpen(ctx, path)
	if err != nil {
		return err
	}
	s.queueWitness([]witnessed{w})
	return nil
}

// ownAtStart takes the path's owner lock before anything is read, so
// that a second collector on the path is refused for that reason alone.
func (s *Sealer) ownAtStart(path string) error {
	s.sealMu.Lock()
	defer s.sealMu.Unlock()
	l := s.logFor(path)
	err := s.own(l)
	if err != nil {
		s.set.Logger.Error("integrity: file not sealed", zap.String("path", path), zap.Error(err))
		l.lastErr = err.Error()
	}
	return err
}

// keepIdleBound forgets idle files beyond the bound, path kept. A
// templated path's files are sealed one by one at start, each holding a
// descriptor (its owner lock), before any round trims them.
func (s *Sealer) keepIdleBound(path string) {
	s.sealMu.Lock()
	defer s.sealMu.Unlock()
	s.forgetIdle(map[string]int64{path: 0})
}

// checkSegmentsAtStart reads the path's signed segment records. Records
// of closed segments without any checkpoint mean the checkpoints sidecar
// was removed (a record is appended only after the checkpoint at its
// segment's end): the start is refused. A recorded segment missing from
// disk, and not removed by retention, is logged at ERROR; sealing goes on,
// since the active file does not depend on it, and verify fails the trail.
func (s *Sealer) checkSegmentsAtStart(path string) error {
	sl, err := LoadSegmentLog(path, s.set.Keys.Verifier)
	if err != nil || sl == nil || sl.Closed() == 0 {
		return nil // the seal reports a bad sidecar
	}
	if !holdsData(CheckpointsPath(path)) {
		return fmt.Errorf("%s: the log %w (%s records %s, but %s is missing or empty: it was removed). "+
			"To start a new log over what it holds, run `sandboxaudit log reset --signing-key KEY %s`",
			path, ErrNoHistory, SegmentsPath(path), plural.Count(sl.Closed(), "closed segment"), CheckpointsPath(path), path)
	}
	dir := filepath.Dir(path)
	for _, rec := range sl.Segments {
		if rec.Genesis || sl.Retired[rec.Name].Retired {
			continue
		}
		plain := filepath.Join(dir, rec.Name)
		if _, err := os.Lstat(plain); err == nil {
			continue
		}
		if _, err := os.Lstat(plain + filesink.ZstdSuffix); err == nil {
			continue
		}
		s.set.Logger.Error("integrity: a closed segment the log records is missing, and no retention record says it was removed",
			zap.String("path", path), zap.String("segment", plain), zap.Int64("first_line", rec.First+1), zap.Int64("last_line", rec.End()))
	}
	return nil
}

// CheckHistory returns an error wrapping ErrNoHistory when the audit path
// holds lines but none of its sidecars holds data, unless a handover's
// note there waits for the new log.
func CheckHistory(path string) error {
	// A handover's note and no log yet: lines a writer made at the path
	// after the handover moved the log's file start the new log, from
	// the note (sealing checks that it names the key).
	if signedHere(path) {
		return nil
	}
	segs, _ := filesink.Segments(path)
	fileLines := holdsALine(path)
	if len(segs) == 0 && !fileLines {
		return nil
	}
	// The lines are the audit file's, or, with it missing or empty, its
	// closed segments'.
	what, file := "the audit file holds lines but", ""
	if !fileLines {
		what, file = "its closed segments hold lines but the log", "the audit file is missing or empty, "
	}
	return fmt.Errorf("%s: %s %w (its sidecars %s, %s and %s are missing or empty, %s%s): "+
		"it was written before integrity was turned on, or cut back, replaced, or moved aside and back without its sidecars; it is not sealed as a new log. "+
		"To start a new log over what it holds, run `sandboxaudit log reset --signing-key KEY %s`",
		path, what, ErrNoHistory, StoreSuffix, CheckpointsSuffix, SegmentsSuffix, file, plural.Count(len(segs), "closed segment"), path)
}

// ErrHandoverNoteGone is wrapped by the error for a path a handover
// retired a log from, with nothing signed there and the note the next log
// starts from gone.
var ErrHandoverNoteGone = errors.New("the handover note the new log starts from is gone")

// checkHandoverNote refuses to start a new log at a path a handover
// retired a log from (found beside it) when nothing is signed there and
// the note is gone: sealing would start a log tied to nothing, which
// verify reports as not starting from the handover. A log tied to nothing
// is started on purpose with `log reset`.
func checkHandoverNote(path string) error {
	if signedHere(path) {
		return nil
	}
	retired := RetiredLogs(path)
	if len(retired) == 0 {
		return nil
	}
	slices.Sort(retired) // by the time in their names
	last := retired[len(retired)-1]
	return fmt.Errorf("%s: %w: a handover retired the log as %s, and %s, the note the new log starts from, is missing or empty. "+
		"Put it back (it is the final checkpoint, the last record of %s), or, to start a log tied to nothing, "+
		"run `sandboxaudit log reset --signing-key KEY %s`",
		path, ErrHandoverNoteGone, last, HandoverPath(path), CheckpointsPath(last), path)
}

// signedHere reports whether one of path's sidecars, or a handover's
// note there, holds data: the path has a signed history to start from.
func signedHere(path string) bool {
	return slices.ContainsFunc([]string{StorePath(path), CheckpointsPath(path), SegmentsPath(path), HandoverPath(path)}, holdsData)
}

// holdsALine reports whether the file at path holds a complete line.
func holdsALine(path string) bool {
	f, err := openNoFollow(path, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		for _, b := range buf[:n] {
			if b == '\n' {
				return true
			}
		}
		if err != nil {
			return false
		}
	}
}

// Retire records that retention is about to remove seg, a closed segment
// of path: a signed retention record in the segments sidecar, so verify
// tells the removal from someone else's. A segment the sealer has not
// recorded yet is refused (retention keeps it and tries again).
func (s *Sealer) Retire(path string, seg filesink.Segment) error {
	s.sealMu.Lock()
	defer s.sealMu.Unlock()
	l := s.logFor(path)
	if l.broken != nil {
		return l.broken
	}
	if err := s.own(l); err != nil {
		return err
	}
	signed, err := l.retire(seg)
	if err != nil || !signed {
		return err // one retired already: retention asks again while it cannot remove it
	}
	s.set.Logger.Info("integrity: signed the retention record of a closed segment", zap.String("path", path), zap.String("segment", seg.Path))
	return nil
}

// refuse keeps the file now at path refused for this process (a later
// write to it is not sealed as a new log); a file that replaces it (a new
// one, its sidecars gone) is sealed as before.
func (s *Sealer) refuse(path string, err error) {
	s.sealMu.Lock()
	defer s.sealMu.Unlock()
	l := s.logFor(path)
	l.broken, l.lastErr = err, err.Error()
	if fi, serr := os.Lstat(path); serr == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			l.sealedDev, l.sealedIno = uint64(st.Dev), st.Ino
		}
	}
}

// Holds reports whether the log of path records seg as one of its closed
// segments: retention counts only those toward max_backups. When the
// records cannot be read it says yes, and Retire decides.
func (s *Sealer) Holds(path string, seg filesink.Segment) bool {
	s.sealMu.Lock()
	defer s.sealMu.Unlock()
	l := s.logFor(path)
	var res sealResult
	if err := l.loadSegmentLog(&res); err != nil {
		return true
	}
	name := filepath.Base(seg.Plain)
	return slices.ContainsFunc(l.segLog.Segments, func(r SegmentRecord) bool { return !r.Genesis && r.Name == name })
}
