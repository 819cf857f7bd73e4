package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestWitnessRefusingSessionsIsSummedUp: with a templated path, a real
// witness that knows none of the sessions' logs refuses each (404). The
// collector logs the first refusal at once and sums up the others (at
// most one line a minute), not one ERROR per session; once the operator
// adds the logs to the witness and it cosigns them all, the collector
// says they are back.
func TestWitnessRefusingSessionsIsSummedUp(t *testing.T) {
	requireE2E(t)
	lw := startLitewitness(t, "e2e.example/witness")
	dir := t.TempDir()
	keyPath, pubPath := keygen(t, dir)
	rec, recURL := startRecordingProxy(t, "http://"+lw.addr)
	sandboxAddr := freeAddr(t)
	base := filepath.Join(dir, "audit")
	cfg := collectorYAML{
		sandboxAddr: sandboxAddr,
		exporter: fmt.Sprintf("file:\n  path: %s\n  integrity:\n    signing_key_file: %s\n    checkpoint_interval: 200ms\n"+
			"    witnesses:\n      - endpoint: %s\n        public_key: %s\n",
			filepath.Join(base, "{session_id}", "events.jsonl"), keyPath, recURL, lw.vkey),
	}.String()
	col := startCollector(t, "collector", dir, cfg, sandboxAddr)
	sessions := []uuid.UUID{
		uuid.MustParse("6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"),
		uuid.MustParse("22222222-3333-4444-8555-666666666666"),
		uuid.MustParse("33333333-4444-4555-8666-777777777777"),
	}
	for _, s := range sessions {
		postLines(t, sandboxAddr, pairLines(s, 1))
	}
	var origins []string
	waitFor(t, "the witness refusing each session's log", func() bool {
		origins = rec.refused(http.StatusNotFound)
		return len(origins) == len(sessions)
	})
	for _, o := range origins {
		lw.addLog(t, o, pubPath)
	}
	for _, o := range origins {
		lw.waitSize(t, o, 2)
	}
	waitFor(t, "the collector saying the logs are back", func() bool {
		return bytes.Contains(mustRead(t, col.log), []byte("witness cosigns again logs it had refused"))
	})
	col.stop(t)
	log := string(mustRead(t, col.log))
	require.Equal(t, 1, strings.Count(log, "witness did not cosign"), "the first session at once, the others summed up:\n%s", log)
	require.Contains(t, log, "404 Not Found")
}

// recordingProxy passes requests to a witness and records, per origin
// submitted, the statuses it answered.
type recordingProxy struct {
	mu       sync.Mutex
	statuses map[string][]int
}

func startRecordingProxy(t *testing.T, target string) (*recordingProxy, string) {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(u)
	p := &recordingProxy{statuses: map[string][]int{}}
	rp.ModifyResponse = func(resp *http.Response) error {
		origin, _ := resp.Request.Context().Value(originKey{}).(string)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.statuses[origin] = append(p.statuses[origin], resp.StatusCode)
		return nil
	}
	addr := freeAddr(t)
	srv := &http.Server{Addr: addr, ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "body", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		// The checkpoint follows the blank line; its first line is the origin.
		_, checkpoint, _ := bytes.Cut(body, []byte("\n\n"))
		origin, _, _ := bytes.Cut(checkpoint, []byte("\n"))
		rp.ServeHTTP(w, r.WithContext(contextWithOrigin(r, string(origin))))
	})}
	go func() { _ = srv.ListenAndServe() }()
	t.Cleanup(func() { _ = srv.Close() })
	waitFor(t, "the proxy listening", func() bool { return dialable(addr) })
	return p, "http://" + addr
}

type originKey struct{}

func contextWithOrigin(r *http.Request, origin string) context.Context {
	return context.WithValue(r.Context(), originKey{}, origin)
}

// refused is the origins the witness answered status at least once.
func (p *recordingProxy) refused(status int) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for o, ss := range p.statuses {
		for _, s := range ss {
			if s == status {
				out = append(out, o)
				break
			}
		}
	}
	return out
}
