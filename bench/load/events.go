package load

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// ProxyEvents is the single-event load: each of clients senders is one
// sandbox session that posts its operations' start and finish events one
// per request, as the Python HttpProxySink does, until d has passed.
type ProxyEvents struct {
	URL     string // the sandboxaudit receiver's events URL
	Clients int
	For     time.Duration
}

// Send runs the load and returns how many events were acknowledged. Any
// answer other than 200 stops the run with an error.
func (p ProxyEvents) Send(ctx context.Context) (Result, error) {
	if p.Clients <= 0 {
		return Result{}, fmt.Errorf("clients must be > 0, got %d", p.Clients)
	}
	client := &http.Client{
		Timeout:   time.Minute,
		Transport: &http.Transport{MaxIdleConnsPerHost: p.Clients, DisableCompression: true},
	}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, p.For)
	defer cancel()
	var (
		wg       sync.WaitGroup
		acked    atomic.Int64
		errOnce  sync.Once
		firstErr error
	)
	began := time.Now()
	for range p.Clients {
		wg.Go(func() {
			s := newProxySession()
			for ctx.Err() == nil {
				err := post(ctx, client, p.URL, "application/json", s.next())
				if ctx.Err() != nil {
					return // the run ended during this request: not counted
				}
				if err != nil {
					errOnce.Do(func() { firstErr = err; cancel() })
					return
				}
				acked.Add(1)
			}
		})
	}
	wg.Wait()
	return Result{Requests: int(acked.Load()), Elapsed: time.Since(began)}, firstErr
}

// proxySession makes one session's events: a start, then its finish, then
// the next operation's start, with fresh ids.
type proxySession struct {
	id   string
	seq  int
	span string
}

func newProxySession() *proxySession { return &proxySession{id: uuid.NewString()} }

// next is the session's next event, its fields in the order pydantic
// writes them (HttpProxySink posts model_dump_json).
func (s *proxySession) next() []byte {
	s.seq++
	var b bytes.Buffer
	if s.seq%2 == 1 {
		s.span = "sandbox_op_" + strings.ReplaceAll(uuid.NewString(), "-", "")
		fmt.Fprintf(&b, `{"version":1,"event_id":%q,"ts":"2026-03-14T15:09:26.535897Z","session_id":%q,"seq":%d,"op":"exec","phase":"start","span_id":%q,"parent_span_id":null,"trace_id":null,"data":{"command":["sh","-lc","ls -la /workspace"],"timeout_s":30.0,"shell":true,"user":null}}`,
			uuid.NewString(), s.id, s.seq, s.span)
		return b.Bytes()
	}
	fmt.Fprintf(&b, `{"version":1,"event_id":%q,"ts":"2026-03-14T15:09:26.786022Z","session_id":%q,"seq":%d,"op":"exec","phase":"finish","span_id":%q,"parent_span_id":null,"trace_id":null,"data":{"command":["sh","-lc","ls -la /workspace"],"timeout_s":30.0,"shell":true,"user":null,"exit_code":0},"ok":true,"duration_ms":250.125,"error_code":null,"error_type":null,"error_message":null,"error_retryable":null,"stdout":null,"stderr":null}`,
		uuid.NewString(), s.id, s.seq, s.span)
	return b.Bytes()
}
