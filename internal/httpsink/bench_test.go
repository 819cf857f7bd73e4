package httpsink

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// BenchmarkSendNDJSON posts batches of 1000 ~400-byte canonical lines to a
// loopback server that reads each body; reports events/s.
func BenchmarkSendNDJSON(b *testing.B) {
	srv := discardServer(b)
	const n = 1000
	lines := makeLines(b, uuid.New(), 1, n, 110)
	avg := len(lines) / n
	require.InDelta(b, 400, avg, 40, "line size")

	sk, err := New(Settings{Client: &http.Client{Timeout: 10 * time.Second}, Endpoint: srv.URL,
		Format: FormatNDJSON, Retry: fastRetry()})
	require.NoError(b, err)
	defer func() { _ = sk.Shutdown(context.Background()) }()
	ctx := context.Background()

	b.SetBytes(int64(len(lines)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := sk.Send(ctx, lines, n); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "events/s")
}
