package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"bytes"
	"context"
	"mime"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Endpoints, the "endpoint" attribute of the receiver's metrics.
const (
	endpointTraces = "traces"
	endpointEvents = "events"
	endpointOther  = "other"
)

// maxPooledBody keeps one huge request from pinning its buffer forever.
const maxPooledBody = 4 << 20

func endpointOf(cfg *Config, path string) string {
	switch path {
	case cfg.TracesPath:
		return endpointTraces
	case cfg.EventsPath:
		return endpointEvents
	}
	return endpointOther
}

// handler adapts a reply-returning handler: it writes the reply and counts
// the request by endpoint, outcome and status code.
func (r *sandboxReceiver) handler(endpoint string, serve func(*http.Request) reply) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rp := serve(req)
		rp.write(w)
		r.recordRequest(req.Context(), endpoint, rp)
	})
}

func (r *sandboxReceiver) recordRequest(ctx context.Context, endpoint string, rp reply) {
	r.tel.ReceiverSandboxauditRequests.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(
		attribute.String("endpoint", endpoint),
		attribute.String("outcome", rp.outcome),
		attribute.Int("http.response.status_code", rp.status),
	)))
}

// mediaType returns the media type of the request without parameters
// (charset and the like), lowercased; "" when absent or unparsable.
func mediaType(req *http.Request) string {
	mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

// readBody reads the whole request body into a pooled buffer; the caller
// returns it with putBody once nothing refers to its bytes any more.
func (r *sandboxReceiver) readBody(req *http.Request) (*bytes.Buffer, error) {
	buf, _ := r.bodyPool.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	if n := req.ContentLength; n > 0 && n <= r.cfg.ServerConfig.MaxRequestBodySize {
		buf.Grow(int(n) + 1) // +1: ReadFrom wants room to see EOF
	}
	_, err := buf.ReadFrom(req.Body)
	_ = req.Body.Close() // the bytes are read; closing cannot lose any
	if err != nil {
		r.putBody(buf)
		return nil, err
	}
	return buf, nil
}

func (r *sandboxReceiver) putBody(buf *bytes.Buffer) {
	if buf.Cap() <= maxPooledBody {
		r.bodyPool.Put(buf)
	}
}
