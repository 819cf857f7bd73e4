package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/heaptest"
)

// BenchmarkVerifyTrail is `verify --key DIR` over a trail of 100,000 and
// of 1,000,000 lines (two sessions) in 20 zstd-compressed segments and an
// active file, sealed as one log: its time, and its heap, which stays flat
// as the trail grows tenfold (the tree is folded and the segments
// decompressed as they stream).
func BenchmarkVerifyTrail(b *testing.B) {
	const segments = 20
	for _, ops := range []int{25_000, 250_000} {
		b.Run(fmt.Sprintf("lines=%d", 4*ops), func(b *testing.B) {
			path, pub := buildTrail(b, b.TempDir(), ops, segments)
			segs, err := filesink.Segments(path)
			if err != nil || len(segs) < segments {
				b.Fatalf("%d segments (%v)", len(segs), err)
			}
			args := []string{"verify", "--key", pub, filepath.Dir(path)}
			for b.Loop() {
				m := heaptest.Start()
				code := Run(context.Background(), args, Streams{Stdout: io.Discard, Stderr: io.Discard})
				m.Report(b)
				if code != 0 {
					b.Fatalf("verify exit %d", code)
				}
			}
		})
	}
}

// buildTrail writes ops operations of two sessions (4 lines each) through a
// rotating, compressing, sealed file sink with about segments segments.
func buildTrail(b *testing.B, dir string, ops, segments int) (string, string) {
	b.Helper()
	keyPath, pubPath, err := integrity.GenerateKeyFiles(dir, "bench")
	if err != nil {
		b.Fatal(err)
	}
	keys, err := integrity.LoadSigningKey(keyPath)
	if err != nil {
		b.Fatal(err)
	}
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "trail", "events.jsonl")
	s1, f1 := op(sessionA, "exec", "a000000000000000", 1, 2)
	lineBytes := int64(len(canonLines(s1, f1))) * 2
	rot := &filesink.Rotation{MaxBytes: lineBytes * int64(ops) / int64(segments), Compress: true}
	sink, err := filesink.New(filesink.Options{Path: path, Fsync: filesink.FsyncNever, OnWrite: sealer.Wrote, Rotation: rot})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var batch []byte
	for i := range ops {
		s, f := op(sessionA, "exec", fmt.Sprintf("a%015d", i), int64(2*i+1), int64(2*i+2))
		s2, f2 := op(sessionB, "read", fmt.Sprintf("b%015d", i), int64(2*i+1), int64(2*i+2))
		batch = append(batch, canonLines(s, f, s2, f2)...)
		if (i+1)%250 == 0 || i == ops-1 {
			if err := sink.WriteBatch(ctx, sessionA.String(), batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
			if (i+1)%25_000 == 0 {
				if err := sealer.SealPending(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	if err := sealer.SealPending(ctx); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		segs, err := filesink.Segments(path)
		if err != nil {
			b.Fatal(err)
		}
		plain := 0
		for _, s := range segs {
			if _, err := os.Lstat(s.Plain); err == nil {
				plain++
			}
		}
		if plain == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := sink.Close(); err != nil {
		b.Fatal(err)
	}
	if err := sealer.Close(ctx); err != nil {
		b.Fatal(err)
	}
	return path, pubPath
}
