package integrity

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/tlog"
	"golang.org/x/sys/unix"
)

func TestProveAndVerifyBundleAlone(t *testing.T) {
	k, pub := testKeys(t, "test")
	path := auditPath(t)
	appendLocked(t, path, lines(1, 13))
	if err := newSealer(t, k).Seal(bg, path); err != nil {
		t.Fatal(err)
	}
	v, err := LoadVerifierKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	for line := int64(1); line <= 13; line++ {
		b, err := Prove(path, line)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := ParseBundle(b.Format())
		if err != nil {
			t.Fatal(err)
		}
		if cp, err := VerifyBundle(parsed, v); err != nil || cp.N != 13 {
			t.Fatalf("line %d: %v (size %d)", line, err, cp.N)
		}
		if want := []byte(lines(int(line), int(line))); string(parsed.Record) != string(want) {
			t.Fatalf("record %q, want %q", parsed.Record, want)
		}
	}
	b, _ := Prove(path, 5)
	for name, mutate := range map[string]func(b *Bundle){
		"record changed": func(b *Bundle) { b.Record = []byte(`{"n":6}` + "\n") },
		"other position": func(b *Bundle) { b.Line = 6 },
		"proof hash":     func(b *Bundle) { b.Proof[0][0] ^= 1 },
	} {
		c := *b
		c.Proof = append(tlog.RecordProof(nil), b.Proof...)
		mutate(&c)
		if _, err := VerifyBundle(&c, v); err == nil {
			t.Errorf("%s: verified", name)
		}
	}
	_, otherPub := testKeys(t, "test")
	ov, _ := LoadVerifierKey(otherPub)
	if _, err := VerifyBundle(b, ov); err == nil || !strings.Contains(err.Error(), "not signed by key") {
		t.Fatalf("other key: %v", err)
	}
	if _, err := Prove(path, 14); err == nil {
		t.Fatal("proved a line past the checkpoint")
	}
}

func TestFrontierMatchesTreeHash(t *testing.T) {
	var f Frontier
	var stored []tlog.Hash
	r := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = stored[x]
		}
		return out, nil
	})
	for n := int64(0); n < 300; n++ {
		want, err := tlog.TreeHash(n, r)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Root(); got != want {
			t.Fatalf("size %d: frontier root %v, TreeHash %v", n, got, want)
		}
		h := tlog.RecordHash([]byte{byte(n), '\n'})
		hs, err := tlog.StoredHashes(n, []byte{byte(n), '\n'}, r)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, hs...)
		f.Push(h)
	}
}

func TestLeafHasherSplitsWrites(t *testing.T) {
	text := "a\nbb\n\nccc\ntail"
	var want []tlog.Hash
	for _, l := range []string{"a\n", "bb\n", "\n", "ccc\n"} {
		want = append(want, tlog.RecordHash([]byte(l)))
	}
	for chunk := 1; chunk <= len(text); chunk++ {
		var got []tlog.Hash
		lh := NewLeafHasher(func(h tlog.Hash) error { got = append(got, h); return nil })
		for i := 0; i < len(text); i += chunk {
			_, _ = lh.Write([]byte(text[i:min(i+chunk, len(text))]))
		}
		if len(got) != len(want) || lh.Complete() != int64(len(text)-4) || !lh.Partial() {
			t.Fatalf("chunk %d: %d leaves, complete %d", chunk, len(got), lh.Complete())
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("chunk %d leaf %d differs", chunk, i)
			}
		}
	}
}

func TestSigningKeyModeAndSecrecy(t *testing.T) {
	dir := t.TempDir()
	keyPath, _, err := GenerateKeyFiles(dir, "mode")
	if err != nil {
		t.Fatal(err)
	}
	secret, _ := os.ReadFile(keyPath)
	if err := os.Chmod(keyPath, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadSigningKey(keyPath)
	if err == nil || !strings.Contains(err.Error(), "0644") || !strings.Contains(err.Error(), "0600") {
		t.Fatalf("LoadSigningKey(0644) = %v", err)
	}
	// A file holding a damaged key: the error names the file, never its bytes.
	bad := strings.Replace(strings.TrimSpace(string(secret)), "PRIVATE+KEY", "PRIVATE+KEX", 1)
	badPath := dir + "/bad.key"
	if err := os.WriteFile(badPath, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadSigningKey(badPath)
	// PRIVATE+KEX+name+hash+keydata: keydata is base64, which may itself
	// hold '+', so split by position, not at the last '+' (a short tail
	// could then turn up in the message by chance).
	secretPart := strings.SplitN(bad, "+", 5)[4]
	if err == nil || strings.Contains(err.Error(), secretPart) || !strings.Contains(err.Error(), badPath) {
		t.Fatalf("LoadSigningKey(bad) = %v", err)
	}
	if _, _, err := GenerateKeyFiles(dir, "mode"); err == nil {
		t.Fatal("keygen overwrote an existing key")
	}
}

// A FIFO in the signing key's place is refused, not waited on: the open
// blocked for a writer, and with it the collector's start.
func TestSigningKeyFIFOIsRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "key")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	_, err := LoadSigningKey(fifo)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a regular file")
}
