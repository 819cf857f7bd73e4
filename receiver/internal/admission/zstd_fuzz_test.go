package admission

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
)

// fuzzMaxBody is max_request_body_size in FuzzZstdFrames: the windows it
// allows are up to 8 MiB (ZstdMaxWindow).
const fuzzMaxBody = 1 << 20

// FuzzZstdFrames: whatever the body and however its bytes are cut,
//   - the walker finds the same frames and errors at the same byte, and
//     reserves at most one window per 6 bytes (the shortest frame header);
//   - the real decoder, beneath which it runs, never holds a window larger
//     than the one reserved, nor allocates more windows than reserved; a
//     body it decodes holds exactly what it allocated;
//   - a body the decoder alone decodes is read whole, to the same bytes,
//     unless a window is over the bound; one read whole decodes alone;
//   - the budget is back to zero after every body, read or refused.
//
// cuts are the lengths, less one, of the pieces the body arrives in, in
// turn (none: whole).
func FuzzZstdFrames(f *testing.F) {
	f.Fuzz(func(t *testing.T, body, cuts []byte) {
		walkAnyCut(t, body, cuts)
		want, wantErr := decodeAlone(body, cuts)
		got, gotErr := readWatched(t, body, cuts)
		if wantErr == nil {
			if _, ok := errors.AsType[*WindowError](gotErr); !ok {
				require.NoError(t, gotErr, "a body the decoder alone decodes is refused")
				require.Equal(t, want, got)
			}
		}
		if gotErr == nil {
			require.NoError(t, wantErr, "a body read whole does not decode alone")
		}
	})
}

// walkAnyCut: the walker's windows and error do not depend on how the
// body is cut, and it reserves no more windows than there is room for
// frame headers.
func walkAnyCut(t *testing.T, body, cuts []byte) {
	t.Helper()
	whole, wholeErr := walk(body, nil)
	cut, cutErr := walk(body, cuts)
	require.Equal(t, whole, cut, "the windows depend on how the body is cut")
	require.Equal(t, errText(wholeErr), errText(cutErr), "the error depends on how the body is cut")
	require.LessOrEqual(t, len(whole), len(body)/6+1)
}

// walk scans body in the pieces cuts gives, and returns the windows
// reserved and the first error.
func walk(body, cuts []byte) ([]int64, error) {
	var held []int64
	f := zstdFrames{max: ZstdMaxWindow(fuzzMaxBody), hold: func(n int64) error { held = append(held, n); return nil }}
	r := &cutReader{body: body, cuts: cuts}
	var buf [256]byte
	for {
		n, _ := r.Read(buf[:])
		if n == 0 {
			return held, nil
		}
		if err := f.scan(buf[:n]); err != nil {
			return held, err
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// decodeAlone is body decoded by a decoder set as Zstd sets it, without
// the walker; over fuzzMaxBody is an error.
func decodeAlone(body, cuts []byte) ([]byte, error) {
	d, err := zstd.NewReader(&cutReader{body: body, cuts: cuts},
		zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(uint64(ZstdMaxWindow(fuzzMaxBody))))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	out, err := io.ReadAll(io.LimitReader(d, fuzzMaxBody+1))
	if err == nil && len(out) > fuzzMaxBody {
		err = &http.MaxBytesError{Limit: fuzzMaxBody}
	}
	return out, err
}

// readWatched reads body as the receiver does, and checks before each
// read of the decoder that the window it holds was reserved, and at the
// end that the budget holds nothing.
func readWatched(t *testing.T, body, cuts []byte) ([]byte, error) {
	t.Helper()
	c := New(Settings{MaxInflightBytes: 1 << 40, MaxBodyBytes: fuzzMaxBody})
	req := httptest.NewRequest(http.MethodPost, "/v1/events", &cutReader{body: body, cuts: cuts})
	req.Header.Set("Content-Encoding", "zstd")
	req = TrackEncoding(req)
	var rb Body
	// seen is the decoder's ring when last looked at, allocated the sum of
	// the rings it made; ring and reserved are rb's once the walker has
	// seen the bytes read.
	var seen, allocated, ring, reserved int64
	look := func(d *zstd.Decoder) int64 {
		if now := zstdRing(t, d); now != seen {
			allocated += now
			seen = now
		}
		return seen
	}
	watched := &hookedBody{ReadCloser: req.Body}
	body2, err := Zstd(fuzzMaxBody)(watched)
	require.NoError(t, err)
	dec := body2.(*zstdBody).dec
	watched.before = func() {
		require.LessOrEqual(t, look(dec), rb.ring, "the decoder holds a window not reserved")
	}
	watched.after = func() { ring, reserved = rb.ring, rb.window }
	req.Body = body2

	err = c.Read(req, &rb)
	require.LessOrEqual(t, look(dec), ring, "the decoder holds a window not reserved")
	require.LessOrEqual(t, allocated, reserved, "the decoder made more windows than were reserved")
	var got []byte
	if err == nil {
		require.Equal(t, allocated, reserved, "a body read whole reserved windows the decoder did not make")
		got = bytes.Clone(rb.Bytes())
		rb.Recycle()
		rb.Done()
	}
	used, _ := c.InUse()
	require.Zero(t, used, "the budget is not given back")
	return got, err
}

// zstdRing is the size of d's history ring, the window it allocates with a
// frame's first block (klauspost/compress keeps it unexported, in
// frameDec.history.ring).
func zstdRing(t *testing.T, d *zstd.Decoder) int64 {
	frame := reflect.ValueOf(d).Elem().FieldByName("frame")
	require.True(t, frame.IsValid(), "zstd.Decoder has no frame field")
	if frame.IsNil() {
		return 0
	}
	ring := frame.Elem().FieldByName("history").FieldByName("ring")
	require.True(t, ring.IsValid(), "zstd.Decoder's frame has no history.ring")
	return int64(ring.Cap())
}

// hookedBody calls before ahead of each read and after each.
type hookedBody struct {
	io.ReadCloser
	before, after func()
}

func (h *hookedBody) Read(p []byte) (int, error) {
	if h.before != nil {
		h.before()
	}
	n, err := h.ReadCloser.Read(p)
	if h.after != nil {
		h.after()
	}
	return n, err
}

// cutReader gives body in pieces of the lengths, less one, that cuts
// lists, in turn (none: as much as is asked).
type cutReader struct {
	body, cuts []byte
	i          int
}

func (r *cutReader) Read(p []byte) (int, error) {
	if len(r.body) == 0 {
		return 0, io.EOF
	}
	n := len(p)
	if len(r.cuts) > 0 {
		n = min(n, int(r.cuts[r.i%len(r.cuts)])+1)
		r.i++
	}
	n = copy(p[:n], r.body)
	r.body = r.body[n:]
	return n, nil
}
