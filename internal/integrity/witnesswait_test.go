package integrity

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"golang.org/x/mod/sumdb/note"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/witness"
	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

// heldWitness stands before a fake witness on 127.0.0.1: its first
// request is held until release, the others pass. It records the size of
// every checkpoint submitted, per origin, in the order they arrive.
type heldWitness struct {
	url     string
	vkey    string
	fake    *witnesstest.Fake
	arrived chan struct{} // closed when the first request is held
	holding atomic.Bool   // the first request is held now

	mu      sync.Mutex
	sizes   map[string][]int64
	release func()
}

func startHeldWitness(t *testing.T, logKey note.Verifier) *heldWitness {
	t.Helper()
	fake := witnesstest.Start(t, "w1.example/w", logKey)
	target, err := url.Parse(fake.URL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	h := &heldWitness{vkey: fake.VKey, fake: fake, arrived: make(chan struct{}), sizes: map[string][]int64{}}
	quit := make(chan struct{})
	var first, once sync.Once
	h.release = func() { once.Do(func() { close(quit) }) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.record(body)
		held := false
		first.Do(func() { held = true })
		if held {
			h.holding.Store(true)
			close(h.arrived)
			select {
			case <-quit:
			case <-r.Context().Done():
			}
			h.holding.Store(false)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(h.release) // before Close, which waits for the handler
	h.url = srv.URL
	return h
}

func (h *heldWitness) record(body []byte) {
	_, _, signed, err := witness.ParseAddCheckpointBody(body)
	if err != nil {
		return
	}
	text, _, _ := bytes.Cut(signed, []byte("\n\n"))
	c, err := ParseCheckpoint(append(text, '\n'))
	if err != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sizes[c.Origin] = append(h.sizes[c.Origin], c.N)
}

// submitted is the sizes submitted for origin, in order.
func (h *heldWitness) submitted(origin string) []int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int64(nil), h.sizes[origin]...)
}

// waitArrived waits, boundedly, for the first request to be held.
func (h *heldWitness) waitArrived(t *testing.T) {
	t.Helper()
	select {
	case <-h.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("no round reached the witness")
	}
}

// witnessedSealer returns a sealer whose one witness is h.
func witnessedSealer(t *testing.T, k *Keys, base string, h *heldWitness, obs Observer) *Sealer {
	t.Helper()
	w, err := witness.NewWitness(h.url, h.vkey, nil, nil)
	require.NoError(t, err)
	pool, err := witness.NewPool([]*witness.Witness{w}, 1, nil, nil)
	require.NoError(t, err)
	s, err := NewSealer(Settings{Keys: k, Interval: time.Hour, OriginBase: base, CallerOwns: true, Witnesses: pool, Observer: obs})
	require.NoError(t, err)
	return s
}

// sealedEmpty makes an empty audit file in dir with its checkpoint of 0
// lines (not submitted), then appends n lines the sealer is told of.
func sealedEmpty(t *testing.T, s *Sealer, dir, name string, n int) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	require.NoError(t, s.Seal(bg, path))
	appendLocked(t, path, lines(1, n))
	s.Wrote(path, n)
	return path
}

// A new session's file of a templated path gets its first checkpoint, and
// its first batch is written, while a round's witness request is held: the
// witness is asked outside the lock a new file's seal takes. The round
// records the cosignature once the witness answers.
func TestNewSessionDoesNotWaitForAWitness(t *testing.T) {
	k, _ := testKeys(t, "test")
	h := startHeldWitness(t, k.Verifier)
	dir := t.TempDir()
	s := witnessedSealer(t, k, dir, h, nil)
	defer func() { require.NoError(t, s.Close(bg)) }()
	plain := sealedEmpty(t, s, dir, "plain.jsonl", 3)
	round := make(chan error, 1)
	go func() { round <- s.SealPending(bg) }()
	h.waitArrived(t)

	sink, err := filesink.New(filesink.Options{
		Path: filepath.Join(dir, "{session_id}", "events.jsonl"), OnWrite: s.Wrote, BeforeCreate: s.SealNew,
	})
	require.NoError(t, err)
	defer func() { require.NoError(t, sink.Close()) }()
	const session = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"
	wrote := make(chan error, 1)
	go func() { wrote <- sink.WriteBatch(bg, session, []byte(lines(1, 2))) }()
	select {
	case err = <-wrote:
	case <-time.After(15 * time.Second):
		h.release()
		if err := <-wrote; err != nil { // the batch ends once the request is let go
			t.Log(err)
		}
		t.Fatal("the new session's first batch waited for the round's witness request")
	}
	require.NoError(t, err)
	require.True(t, h.holding.Load(), "the batch was written while the witness request was held")
	_, c, err := NewestSigned(filepath.Join(dir, session, "events.jsonl"), k.Verifier)
	require.NoError(t, err)
	require.Equal(t, int64(0), c.N, "the new file's checkpoint of 0 lines was signed")

	h.release()
	require.NoError(t, <-round)
	require.Equal(t, 1, countRecords(t, WitnessedPath(plain)), "the round recorded the cosignature")
}

// checkpointSignals signals each checkpoint the sealer writes.
type checkpointSignals chan struct{}

func (c checkpointSignals) LinesSealed(context.Context, int64) {}
func (c checkpointSignals) SealLag(context.Context, int64)     {}
func (c checkpointSignals) CheckpointWritten(context.Context)  { c <- struct{}{} }

func (c checkpointSignals) wait(t *testing.T, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatalf("no checkpoint written for %s", what)
	}
}

// Two rounds seal a file (3 lines, then 6) while a third round's witness
// request is held; whichever asks the witnesses first submits the newest
// checkpoint, and the other finds it cosigned: the witness never sees the
// file's size go back, and nothing is logged.
func TestRoundsSubmitAFilesCheckpointsInOrder(t *testing.T) {
	k, _ := testKeys(t, "test")
	h := startHeldWitness(t, k.Verifier)
	dir := t.TempDir()
	signals := make(checkpointSignals, 8)
	s := witnessedSealer(t, k, dir, h, signals)
	core, logs := observer.New(zapcore.WarnLevel)
	s.set.Logger = zap.New(core)
	defer func() { require.NoError(t, s.Close(bg)) }()
	held := sealedEmpty(t, s, dir, "held.jsonl", 3)
	signals.wait(t, held)
	rounds := make(chan error, 3)
	go func() { rounds <- s.SealPending(bg) }() // held at the witness
	signals.wait(t, held)
	h.waitArrived(t)

	path := filepath.Join(dir, "other.jsonl")
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	require.NoError(t, s.Seal(bg, path)) // 0 lines: not submitted, not held
	signals.wait(t, path)
	for _, n := range []int{3, 6} {
		appendLocked(t, path, lines(n-2, n))
		s.Wrote(path, 3)
		go func() { rounds <- s.SealPending(bg) }()
		signals.wait(t, fmt.Sprintf("%s at %d lines", path, n))
	}
	h.release()
	for range 3 {
		require.NoError(t, <-rounds)
	}
	_, c, err := NewestSigned(path, k.Verifier)
	require.NoError(t, err)
	require.Equal(t, int64(6), c.N)
	require.Equal(t, []int64{6}, h.submitted(c.Origin), "the newest checkpoint, once")
	require.Zero(t, logs.Len(), "%v", logs.All())
	require.Equal(t, 1, countRecords(t, WitnessedPath(path)))
	require.Equal(t, int64(6), h.fake.Size(c.Origin))
}

// A checkpoint the key's holder appends while a round's witness request
// is held is refused by the next seal (it signs more lines than the file
// holds); the round then submits the checkpoint its own seal signed,
// never one that a seal refused.
func TestARoundDoesNotSubmitACheckpointASealRefused(t *testing.T) {
	k, _ := testKeys(t, "test")
	h := startHeldWitness(t, k.Verifier)
	dir := t.TempDir()
	s := witnessedSealer(t, k, dir, h, nil)
	defer func() { require.NoError(t, s.Close(bg)) }()
	paths := []string{sealedEmpty(t, s, dir, "a.jsonl", 3), sealedEmpty(t, s, dir, "b.jsonl", 3)}
	round := make(chan error, 1)
	go func() { round <- s.SealPending(bg) }()
	h.waitArrived(t)
	other := paths[0]
	origin := originOf(k.Signer.Name(), other, dir)
	if len(h.submitted(origin)) > 0 {
		other, origin = paths[1], originOf(k.Signer.Name(), paths[1], dir) // the held request is a's
	}

	forged, err := SignCheckpoint(Checkpoint{Origin: origin, N: 4}, k.Signer)
	require.NoError(t, err)
	f, err := os.OpenFile(CheckpointsPath(other), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write(AppendRecord(nil, forged))
	require.NoError(t, errors.Join(err, f.Close()))
	refused := make(chan error, 1)
	go func() { refused <- s.Seal(bg, other) }() // were it not refused, it would wait for the round
	select {
	case err = <-refused:
	case <-time.After(10 * time.Second):
		h.release()
		if err := <-refused; err != nil {
			t.Log(err)
		}
		t.Fatal("the seal of the file with the appended checkpoint was not refused")
	}
	require.ErrorIs(t, err, ErrTampered)

	h.release()
	require.NoError(t, <-round)
	require.Equal(t, []int64{3}, h.submitted(origin), "the checkpoint the round signed, not the refused one")
}

// The cosigned sizes the sealer remembers stay within the idle files'
// bound after a round: those of idle files (here, as many as the bound,
// cosigned before) give way to those the round's requests add.
func TestWitnessedSizesKeepTheIdleBound(t *testing.T) {
	k, _ := testKeys(t, "test")
	fake, pool := fakeWitnessPool(t, k)
	dir := t.TempDir()
	s, err := NewSealer(Settings{Keys: k, Interval: time.Hour, OriginBase: dir, CallerOwns: true, Witnesses: pool})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close(bg)) }()
	for i := range maxIdleLogs {
		s.setWitnessed(filepath.Join(dir, "idle", fmt.Sprint(i)), 1, Checkpoint{}, true)
	}
	const files = 300
	for i := range files {
		p := sessionFile(dir, i)
		appendLocked(t, p, lines(1, 1))
		s.Wrote(p, 1)
	}
	require.NoError(t, s.SealPending(bg))
	require.Equal(t, int64(1), fake.Size(originOf(k.Signer.Name(), sessionFile(dir, files-1), dir)), "the round's files were cosigned")
	s.wit.mu.Lock()
	defer s.wit.mu.Unlock()
	require.LessOrEqual(t, len(s.wit.done), maxIdleLogs)
}

// fakeWitnessPool starts a fake witness on 127.0.0.1 that cosigns k's
// checkpoints and returns it with a pool of it alone (quorum 1).
func fakeWitnessPool(t *testing.T, k *Keys) (*witnesstest.Fake, *witness.Pool) {
	t.Helper()
	fake := witnesstest.Start(t, "w1.example/w", k.Verifier)
	w, err := witness.NewWitness(fake.URL, fake.VKey, nil, nil)
	require.NoError(t, err)
	pool, err := witness.NewPool([]*witness.Witness{w}, 1, nil, nil)
	require.NoError(t, err)
	return fake, pool
}
