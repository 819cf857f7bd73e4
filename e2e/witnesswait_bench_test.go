package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/witness"
)

// BenchmarkNewSessionWhileWitnessed times a templated path's new session's
// first batch (its file made, its checkpoint of 0 lines signed, its lines
// written) while a round's request to a real litewitness is in flight: the
// case where a new session can be held behind the witnesses. delay holds
// each request that long before it reaches litewitness (a slow witness).
//
//	SANDBOXAUDIT_E2E=1 go test -run '^$' -bench NewSessionWhileWitnessed -benchtime 30x ./e2e/
func BenchmarkNewSessionWhileWitnessed(b *testing.B) {
	requireE2E(b)
	for _, delay := range []time.Duration{0, 200 * time.Millisecond} {
		b.Run(fmt.Sprintf("delay=%s", delay), func(b *testing.B) { benchNewSessionWhileWitnessed(b, delay) })
	}
}

func benchNewSessionWhileWitnessed(b *testing.B, delay time.Duration) {
	lw := startLitewitness(b, "bench.example/witness")
	dir := b.TempDir()
	keyPath, pubPath, err := integrity.GenerateKeyFiles(dir, "bench")
	require.NoError(b, err)
	keys, err := integrity.LoadSigningKey(keyPath)
	require.NoError(b, err)
	arrived, front := startArrivalProxy(b, "http://"+lw.addr, delay)
	w, err := witness.NewWitness(front, lw.vkey, nil, nil)
	require.NoError(b, err)
	pool, err := witness.NewPool([]*witness.Witness{w}, 1, nil, nil)
	require.NoError(b, err)
	base := filepath.Join(dir, "audit")
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: time.Hour, OriginBase: base, Witnesses: pool})
	require.NoError(b, err)
	b.Cleanup(func() { _ = sealer.Close(context.Background()) })
	sink, err := filesink.New(filesink.Options{
		Path: filepath.Join(base, "{session_id}", "events.jsonl"), OnWrite: sealer.Wrote, BeforeCreate: sealer.SealNew,
	})
	require.NoError(b, err)
	b.Cleanup(func() { _ = sink.Close() })

	// The plain file every round submits: its checkpoint is the request in
	// flight when a session begins.
	plain := filepath.Join(base, "plain.jsonl")
	require.NoError(b, os.MkdirAll(base, 0o700))
	require.NoError(b, os.WriteFile(plain, nil, 0o600))
	require.NoError(b, sealer.Seal(context.Background(), plain))
	lw.addLog(b, "bench/plain.jsonl", pubPath)
	line := []byte(`{"n":1}` + "\n")
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		session := fmt.Sprintf("6f1c2a8e-3b4d-4e5f-9a0b-%012x", i)
		lw.addLog(b, "bench/"+session+"/events.jsonl", pubPath)
		f, err := os.OpenFile(plain, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(b, err)
		_, err = f.Write(line)
		require.NoError(b, errors.Join(err, f.Close()))
		sealer.Wrote(plain, 1)
		round := make(chan error, 1)
		go func() { round <- sealer.SealPending(context.Background()) }()
		select {
		case <-arrived:
		case <-time.After(deliveryTimeout):
			b.Fatal("no round reached the witness")
		}
		b.StartTimer()
		require.NoError(b, sink.WriteBatch(context.Background(), session, line))
		b.StopTimer()
		require.NoError(b, <-round)
		select {
		case <-arrived: // the round's other requests
		default:
		}
	}
	b.StopTimer()
	require.Equal(b, int64(b.N), countWitnessed(b, plain), "litewitness cosigned every round's checkpoint")
}

// countWitnessed is the number of records in path's witnessed sidecar.
func countWitnessed(b *testing.B, path string) int64 {
	f, err := os.Open(integrity.WitnessedPath(path))
	require.NoError(b, err)
	defer func() { _ = f.Close() }()
	nr := integrity.NewNoteReader(f)
	var n int64
	for {
		if _, err := nr.Next(); err != nil {
			return n
		}
		n++
	}
}

// startArrivalProxy passes requests to target after delay, and signals on
// arrived as each comes in.
func startArrivalProxy(b *testing.B, target string, delay time.Duration) (<-chan struct{}, string) {
	u, err := url.Parse(target)
	require.NoError(b, err)
	rp := httputil.NewSingleHostReverseProxy(u)
	arrived := make(chan struct{}, 1)
	addr := freeAddr(b)
	srv := &http.Server{Addr: addr, ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case arrived <- struct{}{}:
		default:
		}
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = srv.ListenAndServe() }()
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	waitFor(b, "the proxy listening", func() bool { return dialable(addr) })
	return arrived, "http://" + addr
}
