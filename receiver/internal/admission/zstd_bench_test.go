package admission

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
)

// BenchmarkZstdBody: a zstd body of 1 MiB of events, as an OTLP exporter
// streams it (an 8 MiB window, one frame of 128 KiB blocks), decoded by a
// new decoder as each request gets one: alone, beneath the body's tracking
// (encodedBody), and beneath the tracking and the frame walker. The
// walker's cost is "walked" against "tracked".
func BenchmarkZstdBody(b *testing.B) {
	plain, z := zstdBenchBody(b)
	dec := Zstd(1 << 20)
	out := make([]byte, 32<<10)
	for _, bc := range []struct {
		name string
		body func() io.ReadCloser
	}{
		{"decoder", func() io.ReadCloser { return io.NopCloser(onlyReader{bytes.NewReader(z)}) }},
		{"tracked", func() io.ReadCloser {
			return &encodedBody{ReadCloser: io.NopCloser(onlyReader{bytes.NewReader(z)}), encoding: "zstd"}
		}},
		{"walked", func() io.ReadCloser {
			frames := &zstdFrames{max: ZstdMaxWindow(1 << 20), hold: func(int64) error { return nil }}
			return &encodedBody{ReadCloser: io.NopCloser(onlyReader{bytes.NewReader(z)}), encoding: "zstd", frames: frames}
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(plain)))
			b.ReportAllocs()
			for b.Loop() {
				body, err := dec(bc.body())
				require.NoError(b, err)
				n := 0
				for {
					m, err := fill(body, out)
					n += m
					if err != nil {
						require.ErrorIs(b, err, io.EOF)
						break
					}
				}
				require.Equal(b, len(plain), n)
				require.NoError(b, body.Close())
			}
		})
	}
}

// BenchmarkZstdFramesScan: the walker alone over the body of
// BenchmarkZstdBody, as it arrives in 32 KiB reads; bytes are decoded ones.
func BenchmarkZstdFramesScan(b *testing.B) {
	plain, z := zstdBenchBody(b)
	b.SetBytes(int64(len(plain)))
	for b.Loop() {
		f := zstdFrames{max: ZstdMaxWindow(1 << 20), hold: func(int64) error { return nil }}
		for p := z; len(p) > 0; {
			n := min(len(p), 32<<10)
			if err := f.scan(p[:n]); err != nil {
				b.Fatal(err)
			}
			p = p[n:]
		}
	}
}

// zstdBenchBody is 1 MiB of events and their zstd stream, written as an
// OTLP exporter writes it.
func zstdBenchBody(b *testing.B) (plain, z []byte) {
	var lines bytes.Buffer
	for i := 0; lines.Len() < 1<<20; i++ {
		fmt.Fprintf(&lines, `{"version":1,"seq":%d,"op":"exec","phase":"end","data":{"argv":["ls","-la","/tmp/%x"],"exit_code":0}}`+"\n", i, i*7919)
	}
	var out bytes.Buffer
	enc, err := zstd.NewWriter(&out)
	require.NoError(b, err)
	_, err = enc.Write(lines.Bytes())
	require.NoError(b, err)
	require.NoError(b, enc.Close())
	return lines.Bytes(), out.Bytes()
}

// onlyReader hides all but Read, as a request body does.
type onlyReader struct{ io.Reader }
