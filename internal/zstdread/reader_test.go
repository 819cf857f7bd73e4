package zstdread

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"
	"testing/iotest"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
)

// frame is a zstd frame of n numbered lines, with its checksum.
func frame(t *testing.T, n int) (plain, z []byte) {
	t.Helper()
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "{\"line\":%d,\"pad\":\"%x\"}\n", i, i*7919)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	require.NoError(t, err)
	defer func() { _ = enc.Close() }()
	return b.Bytes(), enc.EncodeAll(b.Bytes(), nil)
}

// failingReader gives data, then err.
func failingReader(data []byte, err error) io.Reader {
	return io.MultiReader(bytes.NewReader(data), iotest.ErrReader(err))
}

func readAll(t *testing.T, src io.Reader) ([]byte, error) {
	t.Helper()
	r, err := NewReader(src)
	require.NoError(t, err)
	defer r.Close()
	return io.ReadAll(r)
}

func TestAWholeFrameReads(t *testing.T) {
	plain, z := frame(t, 5000)
	got, err := readAll(t, bytes.NewReader(z))
	require.NoError(t, err)
	require.Equal(t, plain, got)
}

func TestASourceErrorIsReportedAsItIs(t *testing.T) {
	_, z := frame(t, 5000)
	for _, cut := range []int{4, 20, len(z) / 2, len(z) - 1} {
		_, err := readAll(t, failingReader(z[:cut], syscall.EIO))
		require.ErrorIs(t, err, syscall.EIO, "cut at %d", cut)
		require.False(t, IsDamaged(err), "cut at %d: %v", cut, err)
	}
}

func TestATruncatedFrameIsDamaged(t *testing.T) {
	plain, z := frame(t, 5000)
	for _, cut := range []int{6, len(z) / 2, len(z) - 1} {
		got, err := readAll(t, bytes.NewReader(z[:cut]))
		require.True(t, IsDamaged(err), "cut at %d: %v", cut, err)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF, "cut at %d", cut)
		require.Contains(t, err.Error(), "cut short or damaged")
		require.True(t, bytes.HasPrefix(plain, got), "what was read before the cut is the frame's start")
	}
}

func TestACorruptedFrameIsDamaged(t *testing.T) {
	_, z := frame(t, 5000)
	for _, at := range []int{len(z) / 2, len(z) - 2} { // a block's bytes, the checksum
		bad := bytes.Clone(z)
		bad[at] ^= 0x5a
		_, err := readAll(t, bytes.NewReader(bad))
		require.True(t, IsDamaged(err), "byte %d changed: %v", at, err)
		require.False(t, errors.Is(err, syscall.EIO))
	}
}

// A source that fails where a frame could end (before the first frame,
// after the last) failed all the same: the read says so, even when the
// failure is an unexpected EOF, which the decoder takes for the stream's
// end at a frame boundary.
func TestASourceErrorAtAFrameBoundaryIsReportedAsItIs(t *testing.T) {
	_, z := frame(t, 5000)
	for _, cut := range []int{0, len(z)} {
		for _, fail := range []error{syscall.EIO, io.ErrUnexpectedEOF} {
			_, err := readAll(t, failingReader(z[:cut], fail))
			require.ErrorIs(t, err, fail, "cut at %d", cut)
			require.False(t, IsDamaged(err), "cut at %d: %v", cut, err)
		}
	}
}

// A frame header may ask for a window of up to 512 MiB, which the decoder
// would allocate before the first block: a ten-byte file must not cost
// that. Such a frame is refused as damaged.
func TestAFrameAskingForAHugeWindowIsRefused(t *testing.T) {
	// Magic, a header with no content size and a 512 MiB window, one raw
	// last block holding "x".
	z := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x98, 0x09, 0x00, 0x00, 'x'}
	_, err := readAll(t, bytes.NewReader(z))
	require.ErrorIs(t, err, zstd.ErrWindowSizeExceeded)
	require.True(t, IsDamaged(err), "%v", err)
}
