package sandboxauditexporter

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

// A witness that redirects to another host does not get the witness's
// headers sent there: the client follows a redirect only to the same host,
// as the HTTP sink's does.
func TestWitnessRedirectToAnotherHostIsNotFollowed(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "" || r.Header.Get("Authorization") != "" {
			elsewhere.Add(1)
		}
		http.Error(w, "no", http.StatusForbidden)
	}))
	t.Cleanup(other.Close)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirect.Close)

	keyPath, pubPath := writeKeys(t)
	logKey, err := integrity.LoadVerifierKey(pubPath)
	require.NoError(t, err)
	fw := witnesstest.Start(t, "witness.example/w1", logKey) // for its key only
	cfg := syncConfig()
	withFile(cfg, filepath.Join(t.TempDir(), "audit.jsonl"), auditevent.PolicyOverride{})
	ic := withIntegrity(cfg, keyPath)
	cc := confighttp.NewDefaultClientConfig()
	cc.Endpoint = redirect.URL
	cc.Headers.Set("X-Api-Key", "WITNESSKEY")
	cc.Headers.Set("Authorization", "Bearer WITNESSTOKEN")
	ic.Witnesses = []WitnessConfig{{ClientConfig: cc, PublicKey: fw.VKey}}

	te := startWitnessedExporters(t, cfg, zap.NewNop())
	require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))
	te.shutdown(t)
	require.Zero(t, elsewhere.Load(), "the witness's headers reached the host it redirected to")
	require.Positive(t, te.sum(t, "otelcol_sandboxaudit_exporter_witness_failures"))
}
