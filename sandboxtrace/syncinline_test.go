package sandboxtrace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/protobuf/proto"
)

// bodiesServer is an OTLP/HTTP logs endpoint on 127.0.0.1 that counts the
// record bodies it acknowledged; hold, when set, delays each answer.
type bodiesServer struct {
	mu   sync.Mutex
	seen map[string]int
	hold chan struct{}
}

func (b *bodiesServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req collogs.ExportLogsServiceRequest
	if err != nil || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if b.hold != nil {
		<-b.hold
	}
	b.mu.Lock()
	for _, rl := range req.GetResourceLogs() {
		for _, sl := range rl.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				b.seen[lr.GetBody().GetStringValue()]++
			}
		}
	}
	b.mu.Unlock()
}

func startBodiesServer(t *testing.T, hold chan struct{}) (*bodiesServer, string) {
	t.Helper()
	b := &bodiesServer{seen: map[string]int{}, hold: hold}
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	return b, srv.URL + "/v1/logs"
}

// With a DirectLogExporter emitters export on their own goroutines; many
// at once, and a Shutdown among them: every acknowledged record reached
// the server exactly once.
func TestSyncLogProcessorInlineExportsUnderShutdown(t *testing.T) {
	srv, url := startBodiesServer(t, nil)
	exp, err := NewDirectLogExporter(url)
	require.NoError(t, err)
	p := NewSyncLogProcessor(exp, 0)
	require.True(t, p.inline)

	const emitters, each = 8, 40
	acked := make([][]string, emitters)
	var wg sync.WaitGroup
	for i := range emitters {
		wg.Go(func() {
			for j := range each {
				body := fmt.Sprintf("%d-%d", i, j)
				if emitBody(context.Background(), p, body, 0) != nil {
					return // shut down
				}
				acked[i] = append(acked[i], body)
			}
		})
	}
	for range 1000 { // let some records through before shutting down
		srv.mu.Lock()
		n := len(srv.seen)
		srv.mu.Unlock()
		if n >= emitters*each/4 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, p.Shutdown(context.Background()))
	wg.Wait()

	srv.mu.Lock()
	defer srv.mu.Unlock()
	var n int
	for _, bodies := range acked {
		for _, b := range bodies {
			n++
			assert.Equal(t, 1, srv.seen[b], "record %s acknowledged", b)
		}
	}
	assert.Positive(t, n)
	for b, c := range srv.seen {
		assert.Equal(t, 1, c, "record %s sent once", b)
	}
}

// An emitter exporting on its own goroutine still fails once its sync
// timeout passes: the export's bound ends the request.
func TestSyncLogProcessorInlineTimeout(t *testing.T) {
	hold := make(chan struct{})
	_, url := startBodiesServer(t, hold)
	t.Cleanup(func() { close(hold) }) // before the server closes
	exp, err := NewDirectLogExporter(url)
	require.NoError(t, err)
	const timeout = 50 * time.Millisecond
	p := NewSyncLogProcessor(exp, timeout)
	defer func() { _ = p.Shutdown(context.Background()) }()

	err = emitBody(context.Background(), p, "late", timeout)
	require.ErrorIs(t, err, ErrStartNotRecorded)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
}
