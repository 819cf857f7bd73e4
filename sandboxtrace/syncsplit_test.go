package sandboxtrace

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
)

// pickyServer is a collector stand-in that refuses a whole request (400,
// nothing written) when one of its records is "bad", as the collector
// refuses a push with an event over max_line_bytes. Its first request
// waits for release.
type pickyServer struct {
	arrived, release chan struct{}
	once             sync.Once
	mu               sync.Mutex
	written          []string
}

func (s *pickyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.once.Do(func() {
		close(s.arrived)
		<-s.release
	})
	body, _ := io.ReadAll(r.Body)
	var req collogs.ExportLogsServiceRequest
	_ = proto.Unmarshal(body, &req)
	var bodies []string
	for _, rl := range req.GetResourceLogs() {
		for _, sl := range rl.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				bodies = append(bodies, lr.GetBody().GetStringValue())
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	for _, b := range bodies {
		if b == "bad" {
			reply, _ := proto.Marshal(&spb.Status{Code: 3, Message: "the event's line would be over max_line_bytes"})
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write(reply)
			return
		}
	}
	s.mu.Lock()
	s.written = append(s.written, bodies...)
	s.mu.Unlock()
}

// A record the collector refuses for its content fails alone: the records
// of other sessions that shared its request are sent again without it.
func TestSyncLogProcessorRefusedRecordFailsAlone(t *testing.T) {
	srv := &pickyServer{arrived: make(chan struct{}), release: make(chan struct{})}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	exp, err := NewDirectLogExporter(hs.URL + "/v1/logs")
	require.NoError(t, err)
	p := NewSyncLogProcessor(exp, 0)
	defer func() { require.NoError(t, p.Shutdown(context.Background())) }()

	first := make(chan error, 1)
	go func() { first <- emitBody(context.Background(), p, "first", time.Minute) }()
	<-srv.arrived
	bodies := []string{"a", "bad", "b", "c", "d"}
	errs := make([]chan error, len(bodies))
	for i, b := range bodies {
		errs[i] = make(chan error, 1)
		go func() { errs[i] <- emitBody(context.Background(), p, b, time.Minute) }()
	}
	waitQueued(t, p, len(bodies))
	close(srv.release)
	require.NoError(t, <-first)
	for i, b := range bodies {
		err := <-errs[i]
		if b == "bad" {
			require.ErrorIs(t, err, ErrStartNotRecorded)
			assert.ErrorContains(t, err, "max_line_bytes")
			continue
		}
		require.NoError(t, err, b)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	assert.ElementsMatch(t, []string{"first", "a", "b", "c", "d"}, srv.written, "each written once")
}
