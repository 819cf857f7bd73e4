package sandboxtrace

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// awayLogExporter finds the collector away on every export, after its
// Shutdown too, as an exporter that does not track its own shutdown
// does. Its first export signals first.
type awayLogExporter struct{ first chan struct{} }

func (e *awayLogExporter) Export(context.Context, []sdklog.Record) error {
	select {
	case e.first <- struct{}{}:
	default:
	}
	return refusedDial()
}

func (e *awayLogExporter) Shutdown(context.Context) error   { return nil }
func (e *awayLogExporter) ForceFlush(context.Context) error { return nil }

// A Shutdown whose ctx ended stops the retries of the export in flight:
// its worker ends, rather than retrying for the rest of the export's
// timeout (and each queued part for as long) after Shutdown returned.
func TestLogProcessorRetriesEndWithShutdownsContext(t *testing.T) {
	exp := &awayLogExporter{first: make(chan struct{}, 1)}
	p := NewLogProcessor(exp, WithLogExportTimeout(time.Hour))
	var r sdklog.Record
	require.NoError(t, p.OnEmit(context.Background(), &r))
	<-exp.first

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, p.Shutdown(ctx), context.Canceled)

	select {
	case <-p.done:
	case <-time.After(time.Minute):
		t.Fatal("the worker still retries after Shutdown returned")
	}
	assert.Equal(t, uint64(1), p.Lost())
}
