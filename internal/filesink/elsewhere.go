package filesink

import (
	"io"
	"os"
	"syscall"
)

// leftThePath tells the hooks that of's file, holding lines this sink
// appended, is no longer at the path. Found under one of the path's
// segment names, another writer of the path (a second collector's sink)
// rotated it, under the writers' flock as this sink does:
// OnRotatedByOther. Otherwise it was moved away, removed or replaced:
// OnReplaced.
func (s *Sink) leftThePath(of *openFile) {
	if seg, ok := rotatedByOther(of); ok {
		if s.onRotatedByOther != nil {
			s.onRotatedByOther(of.path, seg.Plain)
		}
		return
	}
	if s.onReplaced != nil {
		s.onReplaced(of.path, of.end)
	}
}

// cutBack tells OnCutBack that of's file, still at the path, holds size
// bytes where this sink's last append left it longer. The end is then
// unknown, so the last byte is read (repairTail): the cut may have left a
// line torn; a cut to nothing cannot have (of.cut).
func (s *Sink) cutBack(of *openFile, size int64) {
	if s.onCutBack != nil {
		s.onCutBack(of.path, of.end, size)
	}
	of.end, of.cut = -1, size > 0
}

// rotatedByOther returns the closed segment of of.path that of's file now
// is: a plain one by its identity, or, once the file is gone from the
// directory (compressed, its plain name removed), a compressed one that
// holds the same bytes. Newest first: a rotation made it lately. A
// rotation renames a file whole: one cut below the bytes this sink
// appended was cut back, whatever its name.
func rotatedByOther(of *openFile) (Segment, bool) {
	fi, err := of.f.Stat()
	if err != nil || fi.Size() < of.end {
		return Segment{}, false
	}
	segs, err := Segments(of.path)
	if err != nil {
		return Segment{}, false
	}
	for i := len(segs) - 1; i >= 0; i-- {
		if SegmentIsFile(segs[i], of.f, fi) {
			return segs[i], true
		}
	}
	return Segment{}, false
}

// SegmentIsFile reports whether seg is the open file f, fi its Stat: a
// plain segment by its identity, a compressed one, once f has no name
// left (compressed, its plain name removed), by its bytes.
func SegmentIsFile(seg Segment, f *os.File, fi os.FileInfo) bool {
	if !seg.Compressed {
		si, err := os.Lstat(seg.Plain)
		return err == nil && os.SameFile(fi, si)
	}
	if !unlinked(fi) {
		return false
	}
	// Read to fi's size: a failure to read either counts as different.
	same, err := sameAsCompressed(io.NewSectionReader(f, 0, fi.Size()), seg.Path)
	return err == nil && same
}

// unlinked reports whether the file fi describes has no name left in any
// directory.
func unlinked(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 0
}
