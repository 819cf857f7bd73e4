package sandboxauditreceiver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/receiver/internal/metadata"
)

// FuzzNDJSON posts arbitrary bodies to the ndjson intake. It never panics,
// and a batch is all or nothing: 200 with every non-blank line delivered, or
// 400 with nothing delivered. Every delivered record body is a canonical
// line that decodes back to itself.
func FuzzNDJSON(f *testing.F) {
	f.Add([]byte(startJSON(1) + "\n" + finishJSON(1) + "\n"))
	f.Add([]byte(startJSON(1) + "\n{\"phase\":\"start\"}\n" + finishJSON(1)))
	f.Add([]byte("\x00\xff{\n\n[]\"\n"))

	cfg := createDefaultConfig().(*Config)
	// Each fuzz input stands alone; with dedupe a seed would only be new once.
	cfg.Dedupe.Enabled = false
	r, err := newSandboxReceiver(cfg, receivertest.NewNopSettings(metadata.Type))
	require.NoError(f, err)
	sink := new(consumertest.LogsSink)
	r.registerLogsConsumer(sink)
	h := r.handler(endpointEvents, r.serveEvents)

	f.Fuzz(func(t *testing.T, body []byte) {
		sink.Reset()
		req := httptest.NewRequest(http.MethodPost, cfg.EventsPath, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/x-ndjson")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)

		switch rec.Code {
		case http.StatusOK:
			var ack struct{ Accepted, Duplicates int }
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &ack))
			want := countLines(body)
			require.Equal(t, want, ack.Accepted)
			require.Zero(t, ack.Duplicates)
			bodies := logBodies(sink)
			require.Len(t, bodies, want)
			for _, b := range bodies {
				ev, err := auditevent.Decode([]byte(b))
				require.NoError(t, err, "delivered body %q does not decode", b)
				require.Equal(t, b, string(auditevent.AppendJSON(nil, &ev)), "not canonical")
			}
		case http.StatusBadRequest:
			require.Zero(t, sink.LogRecordCount(), "a refused batch delivered events")
			require.Regexp(t, `^line [1-9][0-9]*: `, rec.Body.String())
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
	})
}
