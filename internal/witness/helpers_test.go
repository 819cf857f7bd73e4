package witness_test

import (
	"crypto/rand"
	"fmt"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// testLog is an in-memory log whose checkpoints a note key signs.
type testLog struct {
	t        testing.TB
	origin   string
	signer   note.Signer
	verifier note.Verifier
	hashes   []tlog.Hash // stored hashes
	n        int64
}

func newTestLog(t testing.TB, origin string) *testLog {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, origin)
	if err != nil {
		t.Fatal(err)
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return &testLog{t: t, origin: origin, signer: s, verifier: v}
}

func (l *testLog) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		if x >= int64(len(l.hashes)) {
			return nil, fmt.Errorf("index %d beyond %d", x, len(l.hashes))
		}
		out[i] = l.hashes[x]
	}
	return out, nil
}

// add appends lines named prefix0, prefix1, ...
func (l *testLog) add(count int, prefix string) {
	for i := range count {
		hs, err := tlog.StoredHashes(l.n, fmt.Appendf(nil, "%s%d\n", prefix, i), l)
		if err != nil {
			l.t.Fatal(err)
		}
		l.hashes = append(l.hashes, hs...)
		l.n++
	}
}

// checkpoint signs the current tree.
func (l *testLog) checkpoint() []byte {
	root, err := tlog.TreeHash(l.n, l)
	if err != nil {
		l.t.Fatal(err)
	}
	text := fmt.Sprintf("%s\n%d\n%s\n", l.origin, l.n, root)
	msg, err := note.Sign(&note.Note{Text: text}, l.signer)
	if err != nil {
		l.t.Fatal(err)
	}
	return msg
}

func (l *testLog) prover() func(old int64) (tlog.TreeProof, error) {
	n := l.n
	return func(old int64) (tlog.TreeProof, error) { return tlog.ProveTree(n, old, l) }
}
