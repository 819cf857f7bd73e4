package cli

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/heaptest"
)

// BenchmarkVerifySegmentAlone is `verify --key --alone SEGMENT` on one
// middle segment of a 1,000,000-line trail in 20 segments, beside
// `verify --key DIR` on the whole trail: the segment alone reads its own
// lines, every checkpoint's signature and one consistency proof.
func BenchmarkVerifySegmentAlone(b *testing.B) {
	path, pub := buildTrail(b, b.TempDir(), 250_000, 20)
	segs, err := filesink.Segments(path)
	if err != nil || len(segs) < 20 {
		b.Fatalf("%d segments (%v)", len(segs), err)
	}
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"trail", []string{"verify", "--key", pub, filepath.Dir(path)}},
		{"alone", []string{"verify", "--key", pub, "--alone", segs[len(segs)/2].Path}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				m := heaptest.Start()
				code := Run(context.Background(), bc.args, Streams{Stdout: io.Discard, Stderr: io.Discard})
				m.Report(b)
				if code != 0 {
					b.Fatalf("verify exit %d", code)
				}
			}
		})
	}
}
