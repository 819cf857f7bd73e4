package integrity

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/internal/zstdread"
)

// One log per audit path (docs/history.md, "One log per path"): when the
// file sink rotates the file, the closed segment's lines stay leaves of the
// same tree, and the new file's lines follow them. The sealer records each
// closed segment in the segments sidecar (a SegmentRecord: its first leaf,
// its line count, the compact ranges at its start and end), signed, before
// the new file's first line is added.

// hasSegments reports whether the path has a segment log or closed
// segments: its file may then be missing (rotated, nothing written since).
func (l *fileLog) hasSegments() bool {
	if holdsData(SegmentsPath(l.path)) {
		return true
	}
	segs, err := filesink.Segments(l.path)
	return err == nil && len(segs) > 0
}

// loadSegmentLog reads the segments sidecar when it changed since the last
// seal. A torn last record (a crash mid-append) is cut off.
func (l *fileLog) loadSegmentLog(res *sealResult) error {
	p := SegmentsPath(l.path)
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if l.segLog != nil && len(l.segLog.Segments) > 0 {
			return tampered(l.path, "%s, which recorded %d closed segments, is gone", filepath.Base(p), len(l.segLog.Segments))
		}
		l.segLog, l.segSize = &SegmentLog{Retired: map[string]SegmentRecord{}}, 0
		l.setFirst(0)
		return nil
	case err != nil:
		return err
	}
	if l.segLog != nil && fi.Size() == l.segSize {
		return nil
	}
	f, _, err := openRegular(p, os.O_RDWR|noFollow, 0)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	sl, err := ReadSegmentLog(f, l.keys.Verifier)
	if errors.Is(err, ErrTornRecord) {
		if terr := f.Truncate(sl.size); terr != nil {
			return fmt.Errorf("cut torn segment record of %s: %w", l.path, terr)
		}
		res.repaired = append(res.repaired, "cut off a torn last segment record")
		err = nil
	}
	if err != nil {
		return tampered(l.path, "%s: %v", filepath.Base(p), err)
	}
	if l.segLog != nil && len(sl.Segments) < len(l.segLog.Segments) {
		return tampered(l.path, "%s records %d closed segments, %d before: records were removed", filepath.Base(p), len(sl.Segments), len(l.segLog.Segments))
	}
	if l.hasLast && len(sl.Segments) > 0 && sl.Segments[0].Origin != l.last.Origin {
		return tampered(l.path, "%s names the log %q, the checkpoints %q", filepath.Base(p), sl.Segments[0].Origin, l.last.Origin)
	}
	l.segLog, l.segSize = sl, sl.size
	l.setFirst(sl.End())
	return nil
}

func (l *fileLog) setFirst(first int64) {
	if first != l.first {
		l.first, l.known, l.off = first, false, 0
	}
}

// treeAtFirst is the tree up to the active file's first line, from the
// signed compact range the last segment record ends with.
func (l *fileLog) treeAtFirst() (Frontier, error) {
	if l.first == 0 || l.segLog == nil {
		return Frontier{}, nil
	}
	t, err := FrontierAt(l.first, l.segLog.EndRange())
	if err != nil {
		return Frontier{}, tampered(l.path, "the last segment record: %v", err)
	}
	return t, nil
}

// sealSegments seals the segments rotated since the last one recorded,
// oldest first. It looks only when the file at the path may have been
// rotated: on a first seal, or when it is not the file sealed last.
func (l *fileLog) sealSegments(ctx context.Context, store *hashStore, cps *os.File, res *sealResult) error {
	if err := l.loadSegmentLog(res); err != nil {
		return err
	}
	if err := l.startFromHandover(store); err != nil {
		return err
	}
	if l.known && l.pathIsSealedFile() {
		return nil
	}
	pending, err := l.ownUnrecorded(ctx)
	if err != nil {
		return err
	}
	for _, seg := range pending {
		if err := l.sealSegment(ctx, seg, store, cps, res); err != nil {
			return err
		}
		if l.rotation != nil {
			l.rotation(filepath.Base(seg.Plain), true)
		}
	}
	return l.checkReportedOnDisk()
}

// isRegular reports whether name is a regular file, not followed: the
// segments are listed so (filesink.Segments).
func isRegular(name string) bool {
	fi, err := os.Lstat(name)
	return err == nil && fi.Mode().IsRegular()
}

// checkReportedOnDisk refuses the log when a segment the sink made is gone
// before the sealer recorded it: its acknowledged lines would be missing
// from the log without a trace, the new file's lines following the
// segment before it. Compression keeps one of its two names at all times.
// A report that came after its segment was recorded (without flock
// nothing orders the two) is spent here: retention may remove the file.
func (l *fileLog) checkReportedOnDisk() error {
	if l.reported == nil {
		return nil
	}
	for _, name := range l.reported() {
		if slices.ContainsFunc(l.segLog.Segments, func(r SegmentRecord) bool { return r.Name == name }) {
			l.rotation(name, true)
			continue
		}
		plain := filepath.Join(filepath.Dir(l.path), name)
		if isRegular(plain) || isRegular(plain+filesink.ZstdSuffix) {
			continue
		}
		return tampered(l.path, "the closed segment %s, made by a rotation of this collector, is gone before it was sealed: "+
			"its lines are not in the log", name)
	}
	return nil
}

// rotatedBySink reports whether seg is a rotation of the log's: one the
// file sink reported, or the file sealed last. Before the sink reported
// any rotation of the path in this process (a segment rotated before a
// crash), every segment after the last recorded one is taken. The sink
// reports a rotation under the writers' flock on the renamed file, so a
// plain segment not reported yet is asked about again once that flock is
// free.
func (l *fileLog) rotatedBySink(ctx context.Context, seg filesink.Segment) bool {
	if l.rotation == nil {
		return true
	}
	name := filepath.Base(seg.Plain)
	if tracked, reported := l.rotation(name, false); !tracked || reported {
		return true
	}
	if !seg.Compressed {
		l.waitForRotation(ctx, seg.Plain)
	}
	if _, reported := l.rotation(name, false); reported {
		return true
	}
	if l.isHeldFile(seg) || l.isSinkFile(seg) {
		// A file of the log, renamed, and no rotation of ours reported
		// it once its flock was free: another writer of the path
		// rotated it.
		if l.rotatedByOther != nil {
			l.rotatedByOther(name)
		}
		return true
	}
	return false
}

// waitForRotation takes and lets go the writers' flock on a plain
// segment: a rotation in progress holds it until the sink has reported it.
func (l *fileLog) waitForRotation(ctx context.Context, name string) {
	f, err := openNoFollow(name, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	if unlock, _, err := l.lock(ctx, f); err == nil {
		unlock()
	}
}

// pathIsSealedFile reports whether the file at the path is the one the
// sealer last read.
func (l *fileLog) pathIsSealedFile() bool {
	fi, err := os.Lstat(l.path)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && uint64(st.Dev) == l.dev && st.Ino == l.ino
}

// unrecorded lists the closed segments after the last one recorded, in
// order. Segments before it that no record names are left to verify,
// which reports them as foreign.
func (l *fileLog) unrecorded() ([]filesink.Segment, error) {
	disk, err := filesink.Segments(l.path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	recorded := map[string]bool{}
	for _, r := range l.segLog.Segments {
		recorded[r.Name] = true
	}
	from := 0
	var newest time.Time
	for i, s := range disk {
		if recorded[filepath.Base(s.Plain)] {
			from = i + 1
			if s.Time.After(newest) {
				newest = s.Time
			}
		}
	}
	// A name dated ahead of the clock and of the log is not a rotation of
	// the log's (the file sink passes over it too).
	now := time.Now()
	var out []filesink.Segment
	for _, s := range disk[from:] {
		if !recorded[filepath.Base(s.Plain)] && !filesink.AheadOfLog(s, now, newest) {
			out = append(out, s)
		}
	}
	return l.fromSealedFile(out), nil
}

// fromSealedFile drops the segments before the one that is the file
// sealed last: a rotation renames the active file, so a file named as a
// segment that sorts before it was never this log's (put there by
// someone), and verify names it as foreign. One the file sink reported
// making stays: it is the log's wherever it sorts, and sealing it out of
// order is refused loudly rather than its lines left out. Without that
// file among them (compressed meanwhile, or none sealed yet) segs stay as
// they are.
func (l *fileLog) fromSealedFile(segs []filesink.Segment) []filesink.Segment {
	at := slices.IndexFunc(segs, l.isSealedFile)
	if at <= 0 {
		return segs
	}
	out := make([]filesink.Segment, 0, len(segs))
	for _, s := range segs[:at] {
		if l.reportedBySink(s) {
			out = append(out, s)
		}
	}
	return append(out, segs[at:]...)
}

// reportedBySink reports whether the file sink reported making seg and
// the sealer has not recorded it yet.
func (l *fileLog) reportedBySink(seg filesink.Segment) bool {
	if l.rotation == nil {
		return false
	}
	_, reported := l.rotation(filepath.Base(seg.Plain), false)
	return reported
}

// isSealedFile reports whether seg is, still plain, the file sealed last.
func (l *fileLog) isSealedFile(seg filesink.Segment) bool {
	if l.held == nil || seg.Compressed {
		return false
	}
	fi, err := os.Lstat(seg.Plain)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && uint64(st.Dev) == l.dev && st.Ino == l.ino
}

// isHeldFile reports whether seg is the file sealed last, or the file
// held before it (another writer rotated it as this seal opened the
// path's new file): plain, by identity; compressed since, by its bytes,
// once the file held has no name left.
func (l *fileLog) isHeldFile(seg filesink.Segment) bool {
	for _, f := range []*os.File{l.held, l.prevHeld} {
		if f != nil && segmentIsFile(seg, f) {
			return true
		}
	}
	return false
}

// isSinkFile reports whether seg, plain, is the file the sink opened at
// the path last: the sink may not have written to it since another
// writer rotated it, nor the sealer sealed it.
func (l *fileLog) isSinkFile(seg filesink.Segment) bool {
	if l.sinkFile == nil || seg.Compressed {
		return false
	}
	fi := l.sinkFile()
	if fi == nil {
		return false
	}
	si, err := os.Lstat(seg.Plain)
	return err == nil && os.SameFile(fi, si)
}

// segmentIsFile reports whether seg is the open file f.
func segmentIsFile(seg filesink.Segment, f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && filesink.SegmentIsFile(seg, f, fi)
}

// ownUnrecorded lists the segments not recorded yet that are rotations
// of the log's (rotatedBySink), in order. The others were put there by
// someone: verify names them.
func (l *fileLog) ownUnrecorded(ctx context.Context) ([]filesink.Segment, error) {
	segs, err := l.unrecorded()
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(segs, func(s filesink.Segment) bool { return !l.rotatedBySink(ctx, s) }), nil
}

// rotatedSince reports whether a rotation of the log's not recorded yet
// is on disk. A file put there by someone does not count: the next round
// would pass over it again, and the active file would never be sealed.
func (l *fileLog) rotatedSince(ctx context.Context) bool {
	pending, err := l.ownUnrecorded(ctx)
	return err != nil || len(pending) > 0
}

// sealSegment adds the rest of a closed segment's lines to the log and
// records it, with a checkpoint at its end. The active file's offset
// carries over when the segment is the file sealed last; otherwise every
// line is checked against the store.
func (l *fileLog) sealSegment(ctx context.Context, seg filesink.Segment, store *hashStore, cps *os.File, res *sealResult) error {
	had := store.n
	var last int64 // the leaf index after the segment's last line
	var err error
	if seg.Compressed {
		last, err = l.hashCompressed(seg.Path, store)
	} else {
		last, err = l.hashPlainSegment(ctx, seg.Plain, store, res)
	}
	if err != nil {
		return err
	}
	res.lines += store.n - had
	start, err := compactRange(l.first, store)
	if err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	end, err := compactRange(last, store)
	if err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	if err := store.flush(); err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	if store.n > l.last.N || !l.hasLast && store.n > 0 {
		if err := l.checkpoint(store, cps, res); err != nil {
			return err
		}
	}
	rec := SegmentRecord{Origin: l.logOrigin(), Name: filepath.Base(seg.Plain), First: l.first, Count: last - l.first, Range: start, EndRange: end}
	if err := l.appendSegmentRecord(rec); err != nil {
		return err
	}
	l.segLog.Segments = append(l.segLog.Segments, rec)
	l.storeSize = store.size()
	l.markStore(store)
	l.setFirst(last)
	l.forgetIdentity()
	return nil
}

// hashPlainSegment hashes a plain segment under the writers' flock (a
// writer that opened the path before the rotation may still append its
// line), closing a torn last line first.
func (l *fileLog) hashPlainSegment(ctx context.Context, name string, store *hashStore, res *sealResult) (int64, error) {
	f, err := openNoFollow(name, os.O_RDWR|os.O_APPEND|noFollow, 0)
	if errors.Is(err, os.ErrNotExist) {
		// Compressed meanwhile.
		return l.hashCompressed(name+filesink.ZstdSuffix, store)
	}
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	unlock, locked, err := l.lock(ctx, f)
	if err != nil {
		return 0, err
	}
	defer unlock()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size()
	if locked && size > 0 {
		if size, err = cutTorn(f, name, size, res); err != nil {
			return 0, err
		}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	var last int64
	if l.known && ok && uint64(st.Dev) == l.dev && st.Ino == l.ino && size >= l.off {
		// The store held this file's lines and no more (l.known).
		err = hashRange(f, l.off, size, NewLeafHasher(store.add))
		last = store.n
	} else {
		_, last, err = l.hashLines(io.NewSectionReader(f, 0, size), name, store)
	}
	if err != nil {
		return 0, err
	}
	// As for the active file: the segment's lines reach the disk before
	// the checkpoint at its end covers them.
	if err := l.syncAudit(f); err != nil {
		return 0, fmt.Errorf("sync %s before its checkpoint: %w", name, err)
	}
	return last, nil
}

// hashCompressed checks a compressed segment's lines against the store
// and adds the ones it lacks.
func (l *fileLog) hashCompressed(name string, store *hashStore) (int64, error) {
	f, _, err := openRegular(name, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	dec, err := zstdread.NewReader(bufio.NewReaderSize(f, 64<<10), zstd.WithDecoderLowmem(true))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	defer dec.Close()
	_, last, err := l.hashLines(dec, name, store)
	return last, err
}

// logOrigin is the log's origin: its checkpoints', or the default for a
// new log.
func (l *fileLog) logOrigin() string {
	if l.hasLast {
		return l.last.Origin
	}
	if g := l.segLog.Genesis(); g != nil {
		return g.Origin
	}
	return l.origin
}

// appendSegmentRecord signs rec and appends it durably to the segments
// sidecar.
func (l *fileLog) appendSegmentRecord(rec SegmentRecord) error {
	signed, err := SignSegmentRecord(rec, l.keys.Signer)
	if err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	f, err := openNoFollow(SegmentsPath(l.path), os.O_WRONLY|os.O_CREATE|os.O_APPEND|noFollow, 0o600)
	if err != nil {
		return fmt.Errorf("open segment records of %s: %w", l.path, err)
	}
	defer func() { _ = f.Close() }()
	rb := AppendRecord(nil, signed)
	if _, err := f.Write(rb); err != nil {
		return fmt.Errorf("append segment record of %s: %w", l.path, err)
	}
	if err := fsutil.Fdatasync(f); err != nil {
		return fmt.Errorf("sync segment records of %s: %w", l.path, err)
	}
	l.segSize += int64(len(rb))
	return nil
}

// finishWithoutActive ends a seal whose path has no file: rotated, and
// nothing written since, or a new log whose file the file sink has not
// made yet. Neither the store nor the checkpoints may hold a leaf beyond
// the segments.
func (l *fileLog) finishWithoutActive(store *hashStore, cps *os.File, open bool, res *sealResult) error {
	if store.n > l.first {
		return tampered(l.path, "the audit file is missing but %d of its lines were sealed", store.n-l.first)
	}
	if l.hasLast && l.last.N > l.first && !l.hasSegments() {
		return tampered(l.path, "the audit file is missing but its newest checkpoint signs %s", plural.Count(l.last.N-l.first, "line"))
	}
	if err := store.flush(); err != nil { // a handover's leaf 0
		return fmt.Errorf("%s: %w", l.path, err)
	}
	if store.n > l.last.N || !l.hasLast && open {
		if err := l.checkpoint(store, cps, res); err != nil {
			return err
		}
	}
	l.storeSize = store.size()
	l.known = false
	l.markStore(store)
	l.signed, l.hasSigned = l.last, l.hasLast
	return nil
}

// retire records that retention removes seg: a signed retention record,
// appended before the file goes; signed is false for a segment retired
// already. A segment not recorded yet is kept.
func (l *fileLog) retire(seg filesink.Segment) (signed bool, err error) {
	var res sealResult
	if err := l.loadSegmentLog(&res); err != nil {
		return false, err
	}
	name := filepath.Base(seg.Plain)
	if _, done := l.segLog.Retired[name]; done {
		return false, nil
	}
	for _, r := range l.segLog.Segments {
		if r.Name == name {
			ret := SegmentRecord{Origin: r.Origin, Name: name, First: r.First, Count: r.Count, Retired: true}
			if err := l.appendSegmentRecord(ret); err != nil {
				return false, err
			}
			l.segLog.Retired[name] = ret
			return true, nil
		}
	}
	// Compared with the newest record, not found in a listing of the
	// directory: retention asks of every file put there, one by one.
	if newest, ok := l.newestRecorded(); ok && filesink.CompareSegments(seg, newest) < 0 {
		return false, fmt.Errorf("%s: no segment record names it, yet it sorts before the last recorded segment: %w; "+
			"it is left for verify to report (move it out of the directory)", name, filesink.ErrForeignSegment)
	}
	return false, fmt.Errorf("%s is not sealed into the log of %s yet", name, l.path)
}

// newestRecorded is the segment the newest segment record names, beside
// the path; false without one.
func (l *fileLog) newestRecorded() (filesink.Segment, bool) {
	for i := len(l.segLog.Segments) - 1; i >= 0; i-- {
		if r := l.segLog.Segments[i]; !r.Genesis {
			_, seg, ok := filesink.ParseSegment(filepath.Join(filepath.Dir(l.path), r.Name))
			return seg, ok
		}
	}
	return filesink.Segment{}, false
}
