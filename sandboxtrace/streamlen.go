package sandboxtrace

import (
	"context"
	"io"
	"io/fs"
)

// StreamLen is the number of bytes left in r from its current position,
// without consuming them: for an io.Seeker it seeks to the end and back, as
// the Python SDK's best-effort stream length does. It reports false when r
// cannot seek, is a directory, or a seek fails or panics; after a failed
// seek to the end, r's position is put back where it was, unless seeking
// back fails too. A position beyond the end leaves 0 bytes (Python records
// the negative difference). A text stream is measured in bytes, not
// characters: Go readers carry bytes.
func StreamLen(r io.Reader) (n int64, ok bool) {
	s, ok := r.(io.Seeker)
	if !ok {
		return 0, false
	}
	// A Seek or Stat that panics (a nil *bytes.Reader) leaves the length
	// unknown, as the Python helper's except Exception does; the operation
	// then meets the reader itself, and a panic there is recorded.
	defer func() {
		if recover() != nil {
			n, ok = 0, false
		}
	}()
	if isDir(r) {
		return 0, false
	}
	pos, err := s.Seek(0, io.SeekCurrent)
	if err != nil || pos < 0 {
		return 0, false
	}
	end, err := s.Seek(0, io.SeekEnd)
	if err != nil {
		// The seek may have moved before it failed; the operation must
		// still read the stream from where it was.
		_, _ = s.Seek(pos, io.SeekStart)
		return 0, false
	}
	if _, err := s.Seek(pos, io.SeekStart); err != nil {
		return 0, false
	}
	return max(end-pos, 0), true
}

// isDir reports whether r is a directory opened as a file (an *os.File):
// it seeks, but its end is no length (ext4 reports 2^63-1).
func isDir(r io.Reader) bool {
	f, ok := r.(interface{ Stat() (fs.FileInfo, error) })
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.IsDir()
}

// streamSize is StreamLen as the size argument of Write and
// HydrateWorkspace: -1 when unknown.
func streamSize(r io.Reader) int64 {
	if n, ok := StreamLen(r); ok {
		return n
	}
	return -1
}

// WriteStream is Write for a caller holding the content as a reader: bytes
// is the stream's remaining length when it can seek, and left out when it
// cannot. fn receives r unconsumed.
func (s *Session) WriteStream(ctx context.Context, path string, user *string, r io.Reader, fn func(ctx context.Context, r io.Reader) error) error {
	return s.Write(ctx, path, user, streamSize(r), func(ctx context.Context) error { return fn(ctx, r) })
}

// HydrateWorkspaceStream is HydrateWorkspace for an archive held as a
// reader, measured as WriteStream measures.
func (s *Session) HydrateWorkspaceStream(ctx context.Context, untarDir string, r io.Reader, fn func(ctx context.Context, r io.Reader) error) error {
	return s.HydrateWorkspace(ctx, untarDir, streamSize(r), func(ctx context.Context) error { return fn(ctx, r) })
}

// PersistWorkspaceStream is PersistWorkspace for fn that returns the
// archive as a reader: the finish records its remaining length when it can
// seek, as the Python session does with the stream persist returns.
func (s *Session) PersistWorkspaceStream(ctx context.Context, workspaceRoot, tarPath string, fn func(ctx context.Context) (io.Reader, error)) (io.Reader, error) {
	var r io.Reader
	_, err := s.PersistWorkspace(ctx, workspaceRoot, tarPath, func(ctx context.Context) (int64, error) {
		var err error
		if r, err = fn(ctx); err != nil {
			return 0, err
		}
		return streamSize(r), nil
	})
	return r, err
}
