package httpsink

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/heaptest"
)

// BenchmarkMemorySpoolReplay shows replay memory flat in the spool's size:
// a spool of 10k, 100k and 1M ≈400-byte lines (4 MB to 400 MB) replayed
// by one replay round, as the replayer runs it, to a loopback server that
// reads every body. Run with -benchtime 1x: one op is one whole replay.
// The heap is measured from after the spool is filled, so the figures are
// the replay's alone.
func BenchmarkMemorySpoolReplay(b *testing.B) {
	const perBatch = 1000
	batch := makeLines(b, uuid.New(), 1, perBatch, 110)
	for _, lines := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("lines=%d", lines), func(b *testing.B) {
			srv := discardServer(b)
			sp := openSpool(b, filepath.Join(b.TempDir(), "spool.jsonl"), 0)
			sk, err := New(Settings{Client: &http.Client{Timeout: 10 * time.Second}, Endpoint: srv.URL,
				Format: FormatNDJSON, Spool: sp})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = sk.Shutdown(context.Background()) }()
			ctx := context.Background()
			b.SetBytes(int64(len(batch) * lines / perBatch))
			for b.Loop() {
				b.StopTimer()
				for range lines / perBatch {
					if err := sp.Append(ctx, batch); err != nil {
						b.Fatal(err)
					}
				}
				m := heaptest.Start()
				b.StartTimer()
				if _, err := sk.replayRound(ctx); err != nil || sp.Pending() {
					b.Fatalf("replay: %v (pending: %v)", err, sp.Pending())
				}
				b.StopTimer()
				m.Report(b)
				runtime.KeepAlive(sk)
				b.StartTimer()
			}
			runtime.KeepAlive(batch)
		})
	}
}
