package sandboxtrace_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

func TestStreamLen(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "blob"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	_, err = f.Write(make([]byte, 1000))
	require.NoError(t, err)
	_, err = f.Seek(0, io.SeekStart)
	require.NoError(t, err)

	n, ok := sandboxtrace.StreamLen(f)
	assert.True(t, ok)
	assert.EqualValues(t, 1000, n, "seekable at 0: the whole file")

	_, err = f.Seek(250, io.SeekStart)
	require.NoError(t, err)
	n, ok = sandboxtrace.StreamLen(f)
	assert.True(t, ok)
	assert.EqualValues(t, 750, n, "mid-stream: what remains")
	pos, err := f.Seek(0, io.SeekCurrent)
	require.NoError(t, err)
	assert.EqualValues(t, 250, pos, "the position is restored")

	_, ok = sandboxtrace.StreamLen(io.MultiReader(strings.NewReader("abc")))
	assert.False(t, ok, "a reader that cannot seek has no length")

	beyond := bytes.NewReader(make([]byte, 10))
	_, err = beyond.Seek(100, io.SeekStart)
	require.NoError(t, err)
	n, ok = sandboxtrace.StreamLen(beyond)
	assert.True(t, ok)
	assert.EqualValues(t, 0, n, "a position beyond the end leaves nothing to read")
	pos, err = beyond.Seek(0, io.SeekCurrent)
	require.NoError(t, err)
	assert.EqualValues(t, 100, pos, "the position is restored")

	text := strings.NewReader("héllo") // 5 characters, 6 bytes
	n, ok = sandboxtrace.StreamLen(text)
	assert.True(t, ok)
	assert.EqualValues(t, 6, n, "a text reader is measured in bytes")
	rest, err := io.ReadAll(text)
	require.NoError(t, err)
	assert.Equal(t, "héllo", string(rest), "nothing consumed")
}

// TestStreamLenOfADirectoryIsUnknown: a directory opened as a file can
// seek, but its end is no length (ext4 reports 2^63-1 for it, procfs 0):
// it is unknown, as for a stream that cannot seek. Python cannot open one
// as a stream, and its helper leaves the length out when it cannot tell.
func TestStreamLenOfADirectoryIsUnknown(t *testing.T) {
	dir, err := os.Open(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = dir.Close() })
	n, ok := sandboxtrace.StreamLen(dir)
	assert.False(t, ok, "length %d", n)
	assert.EqualValues(t, 0, n)
}

func TestStreamFormsRecordTheRemainingLength(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		run  func(s *sandboxtrace.Session) error
		op   string
		want string // the finish data
	}{
		{"write from a seekable reader mid-stream", func(s *sandboxtrace.Session) error {
			r := bytes.NewReader(make([]byte, 64))
			_, _ = r.Seek(14, io.SeekStart)
			return s.WriteStream(ctx, "/w/a", nil, r, consume)
		}, "write", `{"bytes":50,"path":"/w/a","user":null}`},
		{"write from a reader beyond its end", func(s *sandboxtrace.Session) error {
			r := bytes.NewReader(make([]byte, 10))
			_, _ = r.Seek(100, io.SeekStart)
			return s.WriteStream(ctx, "/w/a", nil, r, consume)
		}, "write", `{"bytes":0,"path":"/w/a","user":null}`},
		{"write from a pipe", func(s *sandboxtrace.Session) error {
			return s.WriteStream(ctx, "/w/a", nil, io.MultiReader(strings.NewReader("x")), consume)
		}, "write", `{"path":"/w/a","user":null}`},
		{"write from a directory", func(s *sandboxtrace.Session) error {
			dir, err := os.Open(t.TempDir())
			require.NoError(t, err)
			defer func() { _ = dir.Close() }()
			return s.WriteStream(ctx, "/w/a", nil, dir, func(context.Context, io.Reader) error { return nil })
		}, "write", `{"path":"/w/a","user":null}`},
		{"hydrate from a seekable reader", func(s *sandboxtrace.Session) error {
			return s.HydrateWorkspaceStream(ctx, "/w", strings.NewReader("tarball"), consume)
		}, "hydrate_workspace", `{"bytes":7,"untar_dir":"/w"}`},
		{"persist to a seekable reader", func(s *sandboxtrace.Session) error {
			_, err := s.PersistWorkspaceStream(ctx, "/w", "", func(context.Context) (io.Reader, error) {
				return bytes.NewReader(make([]byte, 9)), nil
			})
			return err
		}, "persist_workspace", `{"bytes":9,"workspace_root":"/w"}`},
		{"persist to a pipe", func(s *sandboxtrace.Session) error {
			_, err := s.PersistWorkspaceStream(ctx, "/w", "/t.tar", func(context.Context) (io.Reader, error) {
				return io.MultiReader(), nil
			})
			return err
		}, "persist_workspace", `{"tar_path":"/t.tar","workspace_root":"/w"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRecorder(t)
			require.NoError(t, c.run(r.session(t)))
			a := attrs(r.only(t))
			assert.Equal(t, c.op, a["sandbox.operation"].AsString())
			assert.Equal(t, c.want, a["sandbox.finish_data"].AsString())
		})
	}
}

func consume(_ context.Context, r io.Reader) error {
	_, err := io.Copy(io.Discard, r)
	return err
}

// A reader whose Seek panics (a nil *bytes.Reader) has no known length, as
// the Python helper's except Exception gives None: the write is still
// recorded, and a panic in the operation itself is recorded and re-raised.
func TestStreamLenOfAReaderWhoseSeekPanics(t *testing.T) {
	var nilReader *bytes.Reader
	_, ok := sandboxtrace.StreamLen(nilReader)
	assert.False(t, ok)

	r := newRecorder(t)
	s := r.session(t)
	assert.Panics(t, func() { _ = s.WriteStream(context.Background(), "/w/a", nil, nilReader, consume) })
	a := attrs(r.only(t))
	assert.Equal(t, `{"path":"/w/a","user":null}`, a["sandbox.start_data"].AsString())
	assert.Equal(t, "panic", a["error.type"].AsString())
}

// endFails is a reader whose Seek to the end moves there and then fails, as
// a reader wrapping a remote object can: measuring it must still hand the
// operation the stream where it was.
type endFails struct{ *bytes.Reader }

func (r endFails) Seek(off int64, whence int) (int64, error) {
	n, err := r.Reader.Seek(off, whence)
	if whence == io.SeekEnd {
		return n, errors.New("stat: permission denied")
	}
	return n, err
}

func TestStreamLenPutsBackAReaderWhoseSeekToTheEndFails(t *testing.T) {
	r := newRecorder(t)
	s := r.session(t)
	var got []byte
	err := s.WriteStream(context.Background(), "/w/a", nil, endFails{bytes.NewReader([]byte("content"))},
		func(_ context.Context, r io.Reader) error {
			var err error
			got, err = io.ReadAll(r)
			return err
		})
	require.NoError(t, err)
	assert.Equal(t, "content", string(got), "the operation reads the whole stream")
	assert.Equal(t, `{"path":"/w/a","user":null}`, attrs(r.only(t))["sandbox.start_data"].AsString())
}
