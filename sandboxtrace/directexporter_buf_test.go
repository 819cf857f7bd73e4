package sandboxtrace

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// bodyRecords is one record per body.
func bodyRecords(bodies ...string) []sdklog.Record {
	recs := make([]sdklog.Record, len(bodies))
	for i, b := range bodies {
		recs[i].SetBody(attribute.StringValue(b))
	}
	return recs
}

// The request buffer is reused between exports, but one request larger
// than maxKeptRequest does not keep its buffer.
func TestDirectLogExporterDropsALargeRequestsBuffer(t *testing.T) {
	srv, url := startBodiesServer(t, nil)
	e, err := NewDirectLogExporter(url)
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
	ctx := context.Background()

	require.NoError(t, e.Export(ctx, bodyRecords("small")))
	small := cap(e.buf)
	require.NotZero(t, small, "a small request's buffer is kept for the next")
	large := strings.Repeat("x", 2*maxKeptRequest)
	require.NoError(t, e.Export(ctx, bodyRecords(large)))
	require.LessOrEqual(t, cap(e.buf), maxKeptRequest)
	require.NoError(t, e.Export(ctx, bodyRecords("small again")))
	require.LessOrEqual(t, cap(e.buf), maxKeptRequest)
	require.NotZero(t, cap(e.buf))

	srv.mu.Lock()
	defer srv.mu.Unlock()
	require.Equal(t, map[string]int{"small": 1, large: 1, "small again": 1}, srv.seen)
}
