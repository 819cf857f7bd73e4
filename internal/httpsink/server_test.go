package httpsink

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// arrival is one request as the test server saw it.
type arrival struct {
	at          time.Time
	contentType string
	body        []byte
	accepted    bool
}

// behaviour answers one request; it returns whether the request counts as
// accepted (its events delivered).
type behaviour func(w http.ResponseWriter, r *http.Request, body []byte) bool

func ok(w http.ResponseWriter, _ *http.Request, _ []byte) bool {
	w.WriteHeader(http.StatusOK)
	return true
}

func status(code int, header map[string]string, body string) behaviour {
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) bool {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
		return false
	}
}

// refuseHolding answers code to a body that holds line, and as next
// answers any other.
func refuseHolding(line []byte, code int, next behaviour) behaviour {
	return func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if bytes.Contains(body, line) {
			return status(code, nil, "")(w, r, body)
		}
		return next(w, r, body)
	}
}

// hang blocks until the client gives up (or the server closes).
func hang(release <-chan struct{}) behaviour {
	return func(_ http.ResponseWriter, r *http.Request, _ []byte) bool {
		select {
		case <-r.Context().Done():
		case <-release:
		}
		return false
	}
}

// cut hijacks the connection, writes raw (a partial response) and closes it.
func cut(raw string) behaviour {
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) bool {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		_, _ = buf.WriteString(raw)
		_ = buf.Flush()
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // RST, not FIN
		}
		_ = conn.Close()
		return false
	}
}

// testServer is a real HTTP server on 127.0.0.1 that can be taken down
// (connections refused) and brought back on the same address.
type testServer struct {
	t    testing.TB
	addr string
	URL  string

	mu       sync.Mutex
	srv      *http.Server
	script   []behaviour // consumed first, one per request
	dflt     behaviour
	arrivals []arrival
}

func newTestServer(t testing.TB) *testServer {
	ts := &testServer{t: t, dflt: ok}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ts.addr = ln.Addr().String()
	ts.URL = "http://" + ts.addr + "/v1/sandbox/events"
	ts.serve(ln)
	t.Cleanup(func() { ts.down() })
	return ts
}

func (ts *testServer) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(ts.handle), ReadHeaderTimeout: 10 * time.Second}
	ts.mu.Lock()
	ts.srv = srv
	ts.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// down closes the listener and every connection: new connections are
// refused.
func (ts *testServer) down() {
	ts.mu.Lock()
	srv := ts.srv
	ts.srv = nil
	ts.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// up listens again on the same address.
func (ts *testServer) up() {
	var ln net.Listener
	require.Eventually(ts.t, func() bool {
		var err error
		ln, err = net.Listen("tcp", ts.addr)
		return err == nil
	}, 10*time.Second, 20*time.Millisecond, "re-listen on %s", ts.addr)
	ts.serve(ln)
}

func (ts *testServer) setDefault(b behaviour) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.dflt = b
}

func (ts *testServer) then(bs ...behaviour) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.script = append(ts.script, bs...)
}

func (ts *testServer) handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	at := time.Now()
	ts.mu.Lock()
	b := ts.dflt
	if len(ts.script) > 0 {
		b, ts.script = ts.script[0], ts.script[1:]
	}
	ts.mu.Unlock()
	accepted := b(w, r, body)
	ts.mu.Lock()
	ts.arrivals = append(ts.arrivals, arrival{at: at, contentType: r.Header.Get("Content-Type"), body: body, accepted: accepted})
	ts.mu.Unlock()
}

func (ts *testServer) all() []arrival {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]arrival(nil), ts.arrivals...)
}

// acceptedEvents decodes the events of every accepted request, in arrival
// order. Event format bodies are single JSON objects; ndjson bodies are
// lines.
func (ts *testServer) acceptedEvents(t testing.TB) []auditevent.Event {
	var out []auditevent.Event
	for _, a := range ts.all() {
		if !a.accepted {
			continue
		}
		out = append(out, decodeBody(t, a.body)...)
	}
	return out
}

func decodeBody(t testing.TB, body []byte) []auditevent.Event {
	var out []auditevent.Event
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		e, err := auditevent.Decode(sc.Bytes())
		require.NoError(t, err, "server could not decode %q", sc.Text())
		out = append(out, e)
	}
	require.NoError(t, sc.Err())
	return out
}

// seqs lists the seq of each event.
func seqs(es []auditevent.Event) []int64 {
	out := make([]int64, len(es))
	for i, e := range es {
		out[i] = e.Seq
	}
	return out
}

func seqRange(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// makeLines builds canonical lines for events with seqs from..to of one
// session; pad adds a data field so lines can be sized.
func makeLines(t testing.TB, session uuid.UUID, from, to int64, pad int) []byte {
	var out []byte
	ts := time.Date(2026, 12, 2, 13, 0, 0, 0, time.UTC)
	for seq := from; seq <= to; seq++ {
		data, err := auditevent.MarshalData(map[string]any{"argv": []any{"ls", "-la"}, "pad": string(bytes.Repeat([]byte("x"), pad))})
		require.NoError(t, err)
		e := auditevent.Event{
			Version:   1,
			EventID:   uuid.NewSHA1(session, []byte{byte(seq >> 8), byte(seq)}),
			TS:        auditevent.TimestampFromTime(ts.Add(time.Duration(seq) * time.Millisecond)),
			SessionID: session,
			Seq:       seq,
			Op:        "exec",
			Phase:     auditevent.PhaseStart,
			SpanID:    "span-" + uuid.NewSHA1(session, []byte{byte(seq)}).String()[:8],
			Data:      data,
		}
		out = auditevent.AppendLine(out, &e)
	}
	return out
}

// obsStats is what recObserver counted.
type obsStats struct {
	sent, spooled, replayed int
	quarantined             int
	adoptedNotKept          int
	dropped, refused        map[string]int
	lastSpoolSize           int64
}

// recObserver records the Observer calls.
type recObserver struct {
	mu sync.Mutex
	s  obsStats
}

func newRecObserver() *recObserver {
	return &recObserver{s: obsStats{dropped: map[string]int{}, refused: map[string]int{}}}
}

func (o *recObserver) Sent(_ context.Context, n int)    { o.mu.Lock(); o.s.sent += n; o.mu.Unlock() }
func (o *recObserver) Spooled(_ context.Context, n int) { o.mu.Lock(); o.s.spooled += n; o.mu.Unlock() }
func (o *recObserver) Replayed(_ context.Context, n int) {
	o.mu.Lock()
	o.s.replayed += n
	o.mu.Unlock()
}
func (o *recObserver) Dropped(_ context.Context, n int, r string) {
	o.mu.Lock()
	o.s.dropped[r] += n
	o.mu.Unlock()
}
func (o *recObserver) Refused(_ context.Context, n int, r string) {
	o.mu.Lock()
	o.s.refused[r] += n
	o.mu.Unlock()
}
func (o *recObserver) SpoolSize(b int64) { o.mu.Lock(); o.s.lastSpoolSize = b; o.mu.Unlock() }
func (o *recObserver) Quarantined(_ context.Context, n int) {
	o.mu.Lock()
	o.s.quarantined += n
	o.mu.Unlock()
}

func (o *recObserver) AdoptedNotKept(_ context.Context, n int) {
	o.mu.Lock()
	o.s.adoptedNotKept += n
	o.mu.Unlock()
}

func (o *recObserver) stats() obsStats {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.s
	c.dropped, c.refused = map[string]int{}, map[string]int{}
	for k, v := range o.s.dropped {
		c.dropped[k] = v
	}
	for k, v := range o.s.refused {
		c.refused[k] = v
	}
	return c
}
