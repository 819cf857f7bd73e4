package httpsink

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// BenchmarkSendNDJSON posts batches of 1000 ~400-byte canonical lines to a
// loopback server that reads each body; reports events/s.
func BenchmarkSendNDJSON(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
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
