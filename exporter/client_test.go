package sandboxauditexporter

import (
	"compress/gzip"
	"context"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/extension/extensionauth"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// bearerAuth is an auth extension the way confighttp finds one: a
// component in the host's extensions that is an extensionauth.HTTPClient.
type bearerAuth struct {
	component.StartFunc
	component.ShutdownFunc
	token string
}

var _ extensionauth.HTTPClient = bearerAuth{}

func (a bearerAuth) RoundTripper(base http.RoundTripper) (http.RoundTripper, error) {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+a.token)
		return base.RoundTrip(r)
	}), nil
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type hostWithExtensions struct {
	component.Host
	ext map[component.ID]component.Component
}

func (h hostWithExtensions) GetExtensions() map[component.ID]component.Component { return h.ext }

// The HTTP sink's client is built the collector way: TLS, headers, an auth
// extension and compression from confighttp all reach the wire.
func TestHTTPClientSettingsReachTheWire(t *testing.T) {
	type seen struct {
		header http.Header
		body   string
		tls    bool
	}
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, seen{header: r.Header.Clone(), body: string(b), tls: r.TLS != nil})
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)

	authID := component.MustNewID("bearerauth")
	cfg := syncConfig()
	hc := withHTTP(cfg, srv.URL+"/v1/sandbox/events", "ndjson", auditevent.PolicyOverride{})
	hc.ClientConfig.TLS.CAPem = configopaque.String(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	hc.ClientConfig.Headers = configopaque.MapList{{Name: "X-Audit-Tenant", Value: "team-a"}}
	hc.ClientConfig.Compression = configcompression.TypeGzip
	hc.ClientConfig.Auth = configoptional.Some(configauth.Config{AuthenticatorID: authID})
	require.NoError(t, cfg.Validate())

	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := exportertest.NewNopSettings(typ)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	tr, err := NewFactory().CreateTraces(context.Background(), set, cfg)
	require.NoError(t, err)
	host := hostWithExtensions{Host: componenttest.NewNopHost(), ext: map[component.ID]component.Component{
		authID: bearerAuth{token: "s3cr3t-token"},
	}}
	require.NoError(t, tr.Start(context.Background(), host))
	t.Cleanup(func() { require.NoError(t, tr.Shutdown(context.Background())) })

	require.NoError(t, tr.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 1)
	assert.True(t, got[0].tls)
	assert.Equal(t, "team-a", got[0].header.Get("X-Audit-Tenant"))
	assert.Equal(t, "Bearer s3cr3t-token", got[0].header.Get("Authorization"))
	assert.Equal(t, "gzip", got[0].header.Get("Content-Encoding"))
	assert.Equal(t, "application/x-ndjson", got[0].header.Get("Content-Type"))
	assert.Equal(t, strings.Join(expectedDefault(t), ""), got[0].body)
}

// Without the server's CA the TLS handshake fails: the client really
// verifies, it does not fall back to skipping verification.
func TestHTTPClientVerifiesTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	cfg := syncConfig()
	withHTTP(cfg, srv.URL, "ndjson", auditevent.PolicyOverride{})
	te := startExporters(t, cfg)

	err := te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...))
	require.Error(t, err)
	assert.ErrorContains(t, err, "certificate")
	assert.Equal(t, int64(6), te.counter(t, "otelcol_sandboxaudit_exporter_events_dropped", "reason", "no_spool"))
}

// With debug_response_body on, a token that an auth extension adds (the
// exporter's configuration never sees it) is still redacted from the body
// excerpt of an endpoint that echoes it, through confighttp's real chain.
func TestDebugResponseBodyRedactsAuthExtensionToken(t *testing.T) {
	const token = "s3cr3t-ext-token"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, "you sent "+r.Header.Get("Authorization"))
	}))
	t.Cleanup(srv.Close)
	authID := component.MustNewID("bearerauth")
	cfg := syncConfig()
	hc := withHTTP(cfg, srv.URL+"/v1/sandbox/events", "ndjson", auditevent.PolicyOverride{})
	hc.DebugResponseBody = true
	hc.ClientConfig.Compression = configcompression.TypeGzip
	hc.ClientConfig.Auth = configoptional.Some(configauth.Config{AuthenticatorID: authID})
	require.NoError(t, cfg.Validate())
	tr, err := NewFactory().CreateTraces(context.Background(), exportertest.NewNopSettings(typ), cfg)
	require.NoError(t, err)
	host := hostWithExtensions{Host: componenttest.NewNopHost(), ext: map[component.ID]component.Component{
		authID: bearerAuth{token: token},
	}}
	require.NoError(t, tr.Start(context.Background(), host))
	t.Cleanup(func() { require.NoError(t, tr.Shutdown(context.Background())) })

	err = tr.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...))

	require.Error(t, err)
	assert.Contains(t, err.Error(), "you sent [REDACTED]")
	assert.NotContains(t, err.Error(), token)
}
