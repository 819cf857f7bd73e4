package sandboxauditexporter

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestEchoingEndpointNeverLeaksConfiguredHeaders: the endpoint answers
// 401, 400 and 503 with a body repeating the Authorization header the
// exporter sent (from http.headers). Whatever the status, neither the
// collector's log (DEBUG included) nor the error returned upstream holds
// the token; the log gives the status and the response length. With
// debug_response_body the body is shown, the token redacted.
func TestEchoingEndpointNeverLeaksConfiguredHeaders(t *testing.T) {
	const token = "sk-live-0123456789abcdef"
	for _, debug := range []bool{false, true} {
		for _, code := range []int{http.StatusUnauthorized, http.StatusBadRequest, http.StatusServiceUnavailable} {
			t.Run(http.StatusText(code), func(t *testing.T) {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.WriteHeader(code)
					_, _ = w.Write([]byte(`{"error":"denied","echo":{"Authorization":"` + r.Header.Get("Authorization") + `"}}`))
				}))
				t.Cleanup(srv.Close)
				dir := t.TempDir()
				cfg := syncConfig()
				hc := withHTTP(cfg, srv.URL, "ndjson", auditevent.PolicyOverride{})
				hc.ClientConfig.Headers.Set("Authorization", configopaque.String("Bearer "+token))
				hc.DebugResponseBody = debug
				hc.Spool.GetOrInsertDefault().Path = filepath.Join(dir, "spool.jsonl")
				core, logs := observer.New(zapcore.DebugLevel)
				te := startExportersWithLogger(t, cfg, zap.New(core))

				err := te.logs.ConsumeLogs(context.Background(), buildAuditLogs())
				msg := ""
				if err != nil {
					msg = err.Error()
				}
				assert.NotContains(t, msg, token)
				require.NotZero(t, logs.Len())
				for _, e := range logs.All() {
					assert.NotContains(t, e.Message, token)
					for k, v := range e.ContextMap() {
						assert.NotContains(t, toText(v), token, "log %q field %s", e.Message, k)
					}
				}
				if code != http.StatusServiceUnavailable {
					sized := logs.FilterFieldKey("response_bytes")
					require.NotZero(t, sized.Len(), "the log names the response length")
					_, shown := sized.All()[0].ContextMap()["response_redacted"]
					assert.Equal(t, debug, shown, "the body is shown only with debug_response_body")
					if debug {
						assert.Contains(t, sized.All()[0].ContextMap()["response_redacted"], `"Authorization":"[REDACTED]"`)
					}
				}
			})
		}
	}
}

func toText(v any) string { return fmt.Sprint(v) }
