// Package witnesstest is a C2SP tlog-witness for tests: an httptest server
// that keeps, per origin, the tree it last cosigned, checks consistency
// proofs with tlog.CheckTree, and cosigns with torchwood's cosignature
// signer. Tests that need the real thing run litewitness (see e2e).
package witnesstest

import (
	"crypto"
	"crypto/ed25519"
	"crypto/mldsa"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/internal/witness"
)

// Fake is a running fake witness.
type Fake struct {
	URL string
	// VKey is the witness's cosignature verifier key.
	VKey string

	signer *torchwood.CosignatureSigner
	priv   crypto.Signer
	logKey note.Verifier

	mu       sync.Mutex
	trees    map[string]tlog.Tree
	requests int
	// status, when set, answers every request with it.
	status int
	// skew dates the cosignatures that much after the clock (Ed25519).
	skew time.Duration
}

// Start runs a fake witness named name that trusts logKey for every
// origin (each starts at size 0), until the test ends.
func Start(t testing.TB, name string, logKey note.Verifier) *Fake {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return start(t, name, logKey, priv)
}

// StartMLDSA is Start with an ML-DSA-44 key: its cosignature lines are
// about 3 KB each, an Ed25519 one's about 120 bytes.
func StartMLDSA(t testing.TB, name string, logKey note.Verifier) *Fake {
	t.Helper()
	priv, err := mldsa.GenerateKey(mldsa.MLDSA44())
	if err != nil {
		t.Fatal(err)
	}
	return start(t, name, logKey, priv)
}

func start(t testing.TB, name string, logKey note.Verifier, priv crypto.Signer) *Fake {
	t.Helper()
	s, err := torchwood.NewCosignatureSigner(name, priv)
	if err != nil {
		t.Fatal(err)
	}
	f := &Fake{VKey: s.Verifier().String(), signer: s, priv: priv, logKey: logKey, trees: map[string]tlog.Tree{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// Witnesses are clients of fakes, in their order, to build a pool of.
func Witnesses(t testing.TB, fakes ...*Fake) []*witness.Witness {
	t.Helper()
	ws := make([]*witness.Witness, 0, len(fakes))
	for _, f := range fakes {
		w, err := witness.NewWitness(f.URL, f.VKey, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	return ws
}

// SetStatus makes every later request answer status (0: normal again).
func (f *Fake) SetStatus(status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status = status
}

// SetClockSkew dates every later cosignature skew after the clock, as a
// witness whose clock is wrong would (0: the clock's time). Ed25519 only.
func (f *Fake) SetClockSkew(skew time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.skew = skew
}

// CosignatureLine is the witness's cosignature line on the checkpoint
// text, dated as SetClockSkew says, without the protocol's checks.
func (f *Fake) CosignatureLine(text string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cosign(text)
}

// cosign signs text; called with mu held.
func (f *Fake) cosign(text string) ([]byte, error) {
	var signer note.Signer = f.signer
	if f.skew != 0 {
		k, ok := f.priv.(ed25519.PrivateKey)
		if !ok {
			return nil, errors.New("a clock skew needs an Ed25519 witness")
		}
		signer = skewedSigner{CosignatureSigner: f.signer, key: k, at: time.Now().Add(f.skew)}
	}
	cosigned, err := note.Sign(&note.Note{Text: text}, signer)
	if err != nil {
		return nil, err
	}
	_, sigs, _ := cutLast(cosigned)
	return sigs, nil
}

// skewedSigner signs a C2SP cosignature/v1 dated at, not now.
type skewedSigner struct {
	*torchwood.CosignatureSigner
	key ed25519.PrivateKey
	at  time.Time
}

func (s skewedSigner) Sign(msg []byte) ([]byte, error) {
	t := uint64(s.at.Unix())
	sig := binary.BigEndian.AppendUint64(nil, t)
	return append(sig, ed25519.Sign(s.key, fmt.Appendf(nil, "cosignature/v1\ntime %d\n%s", t, msg))...), nil
}

// Requests is the number of add-checkpoint requests received.
func (f *Fake) Requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

// Size is the size the witness last cosigned for origin.
func (f *Fake) Size(origin string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.trees[origin].N
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	if r.Method != http.MethodPost || r.URL.Path != "/add-checkpoint" {
		http.NotFound(w, r)
		return
	}
	if f.status != 0 {
		http.Error(w, http.StatusText(f.status), f.status)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cosig, status, known := f.add(body)
	switch status {
	case http.StatusOK:
		_, _ = w.Write(cosig)
	case http.StatusConflict:
		w.Header().Set("Content-Type", "text/x.tlog.size")
		w.WriteHeader(status)
		_, _ = fmt.Fprintf(w, "%d\n", known)
	default:
		http.Error(w, http.StatusText(status), status)
	}
}

// add runs the protocol's checks in its order; called with mu held.
func (f *Fake) add(body []byte) (cosig []byte, status int, known int64) {
	old, proof, signed, err := witness.ParseAddCheckpointBody(body)
	if err != nil {
		return nil, http.StatusBadRequest, 0
	}
	n, err := note.Open(signed, note.VerifierList(f.logKey))
	var unverified *note.UnverifiedNoteError
	var invalid *note.InvalidSignatureError
	if errors.As(err, &unverified) || errors.As(err, &invalid) {
		return nil, http.StatusForbidden, 0
	}
	if err != nil {
		return nil, http.StatusBadRequest, 0
	}
	c, err := torchwood.ParseCheckpoint(n.Text)
	if err != nil || old > c.N {
		return nil, http.StatusBadRequest, 0
	}
	prev := f.trees[c.Origin]
	if old != prev.N {
		return nil, http.StatusConflict, prev.N
	}
	if old == c.N && c.Hash != prev.Hash && old > 0 {
		return nil, http.StatusConflict, prev.N
	}
	if old > 0 && tlog.CheckTree(proof, c.N, c.Hash, old, prev.Hash) != nil {
		return nil, http.StatusUnprocessableEntity, 0
	}
	f.trees[c.Origin] = c.Tree
	sigs, err := f.cosign(n.Text)
	if err != nil {
		return nil, http.StatusInternalServerError, 0
	}
	return sigs, http.StatusOK, 0
}

// cutLast splits a signed note at its last empty line.
func cutLast(msg []byte) (text, sigs []byte, ok bool) {
	for i := len(msg) - 2; i >= 0; i-- {
		if msg[i] == '\n' && msg[i+1] == '\n' {
			return msg[:i+1], msg[i+2:], true
		}
	}
	return msg, nil, false
}
