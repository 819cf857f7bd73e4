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

// stallingServer holds its first request until release, refuses a request
// of more than one record whole (400), and holds a single record's request
// until the client gives up on it.
type stallingServer struct {
	arrived, release, stop chan struct{}
	once                   sync.Once
	mu                     sync.Mutex
	singles                int
}

func (s *stallingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	first := false
	s.once.Do(func() { first = true })
	if first {
		close(s.arrived)
		select {
		case <-s.release:
		case <-s.stop:
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req collogs.ExportLogsServiceRequest
	_ = proto.Unmarshal(body, &req)
	if len(req.GetResourceLogs()[0].GetScopeLogs()[0].GetLogRecords()) > 1 {
		reply, _ := proto.Marshal(&spb.Status{Code: 3, Message: "refused"})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(reply)
		return
	}
	s.mu.Lock()
	s.singles++
	s.mu.Unlock()
	select {
	case <-r.Context().Done():
	case <-s.stop:
	}
}

// The halves of a refused request go within the export's one timeout:
// once it passed, the records not resent yet fail, so a split export
// holds the processor (and an emitter exporting inline) no longer than
// an export does.
func TestSyncLogProcessorSplitKeepsTheExportBound(t *testing.T) {
	srv := &stallingServer{arrived: make(chan struct{}), release: make(chan struct{}), stop: make(chan struct{})}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(srv.stop) })
	exp, err := NewDirectLogExporter(hs.URL + "/v1/logs")
	require.NoError(t, err)
	// Long enough to queue two records behind the first request.
	p := NewSyncLogProcessor(exp, 3*time.Second)
	defer func() { require.NoError(t, p.Shutdown(context.Background())) }()

	first := make(chan error, 1)
	go func() { first <- emitBody(context.Background(), p, "first", time.Minute) }()
	<-srv.arrived
	errs := make(chan error, 2)
	for _, b := range []string{"a", "b"} {
		go func() { errs <- emitBody(context.Background(), p, b, time.Minute) }()
	}
	waitQueued(t, p, 2)
	close(srv.release)
	require.NoError(t, <-first)
	for range 2 {
		require.ErrorIs(t, <-errs, context.DeadlineExceeded)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	assert.Equal(t, 1, srv.singles, "the second half went after the export's timeout")
}

// gatedRefusals holds its first request until release, and a request of
// more than one record until refuse, which it then refuses whole (400); it
// writes single records.
type gatedRefusals struct {
	arrived, release, grouped, refuse chan struct{}
	once, groupOnce                   sync.Once
	mu                                sync.Mutex
	written                           []string
}

func (s *gatedRefusals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	first := false
	s.once.Do(func() { first = true })
	w.Header().Set("Content-Type", "application/x-protobuf")
	if first {
		close(s.arrived)
		<-s.release
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req collogs.ExportLogsServiceRequest
	_ = proto.Unmarshal(body, &req)
	records := req.GetResourceLogs()[0].GetScopeLogs()[0].GetLogRecords()
	if len(records) > 1 {
		s.groupOnce.Do(func() { close(s.grouped) })
		<-s.refuse
		reply, _ := proto.Marshal(&spb.Status{Code: 3, Message: "refused"})
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(reply)
		return
	}
	s.mu.Lock()
	s.written = append(s.written, records[0].GetBody().GetStringValue())
	s.mu.Unlock()
}

// A record whose emitter's context ended while its request was in flight
// is not sent again in a half: its operation was told it was not recorded.
func TestSyncLogProcessorSplitLeavesOutAnEndedContext(t *testing.T) {
	srv := &gatedRefusals{arrived: make(chan struct{}), release: make(chan struct{}),
		grouped: make(chan struct{}), refuse: make(chan struct{})}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	exp, err := NewDirectLogExporter(hs.URL + "/v1/logs")
	require.NoError(t, err)
	p := NewSyncLogProcessor(exp, time.Minute)
	defer func() { require.NoError(t, p.Shutdown(context.Background())) }()

	first := make(chan error, 1)
	go func() { first <- emitBody(context.Background(), p, "first", time.Minute) }()
	<-srv.arrived
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gone, other := make(chan error, 1), make(chan error, 1)
	go func() { gone <- emitBody(ctx, p, "gone", time.Minute) }()
	waitQueued(t, p, 1)
	go func() { other <- emitBody(context.Background(), p, "other", time.Minute) }()
	waitQueued(t, p, 2)
	close(srv.release)
	require.NoError(t, <-first)
	<-srv.grouped
	cancel()
	require.ErrorIs(t, <-gone, context.Canceled)
	close(srv.refuse)
	require.NoError(t, <-other)
	srv.mu.Lock()
	defer srv.mu.Unlock()
	assert.Equal(t, []string{"other"}, srv.written, "the record whose context ended is not sent again")
}
