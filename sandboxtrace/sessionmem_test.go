package sandboxtrace_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/sandboxaudit/sandboxaudit/sandboxtrace"
)

// A session with its own log pipeline (WithLogExporter, as the README's
// first example builds it) holds no queue of records up front: a service
// with a session per sandbox keeps hundreds of them open, and a queue of
// 2,048 records is more than a megabyte.
func TestSessionLogPipelineIsSmallWhenIdle(t *testing.T) {
	for _, d := range []sandboxtrace.Delivery{sandboxtrace.DeliveryBestEffort, sandboxtrace.DeliverySync} {
		t.Run(d.String(), func(t *testing.T) {
			tp := sdktrace.NewTracerProvider()
			t.Cleanup(func() { require.NoError(t, tp.Shutdown(context.Background())) })
			const n = 20
			sessions := make([]*sandboxtrace.Session, 0, n)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range n {
				s, err := sandboxtrace.NewSession(context.Background(), tp,
					sandboxtrace.WithLogExporter(nopLogs{}), sandboxtrace.WithDelivery(d))
				require.NoError(t, err)
				sessions = append(sessions, s)
			}
			runtime.ReadMemStats(&after)
			for _, s := range sessions {
				require.NoError(t, s.Shutdown(context.Background()))
			}
			perSession := (after.TotalAlloc - before.TotalAlloc) / n
			assert.Less(t, perSession, uint64(64<<10), "bytes allocated per idle session")
		})
	}
}
