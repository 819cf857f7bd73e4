package integrity

import (
	"bytes"
	"crypto/ed25519"
	"io"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

func FuzzParseCheckpoint(f *testing.F) {
	f.Add([]byte("test/audit.jsonl\n3\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"))
	f.Add([]byte("o\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\nextension\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCheckpoint(data)
		if err != nil {
			return
		}
		again, err := ParseCheckpoint(c.Format())
		if err != nil || again != c {
			t.Fatalf("round trip: %+v -> %+v, %v", c, again, err)
		}
	})
}

func FuzzParseBundle(f *testing.F) {
	f.Add([]byte(bundleHeader + "line 1\nproof 0\n{\"n\":1}\no\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n— k abc=\n"))
	f.Add([]byte(bundleHeader + "line 2\nfirst-leaf 1\nproof 0\nx\n"))
	f.Add([]byte(bundleHeader + "line 2\nproof 1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\nx\n"))
	// A fixed verifier: checking an arbitrary bundle must fail cleanly.
	vkey, err := note.NewEd25519VerifierKey("fuzz", ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)).Public().(ed25519.PublicKey))
	if err != nil {
		f.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseBundle(data)
		if err != nil {
			return
		}
		if _, err := VerifyBundle(b, v); err == nil {
			t.Fatal("an unsigned bundle verified")
		}
		again, err := ParseBundle(b.Format())
		if err != nil || again.Line != b.Line || again.First != b.First || !bytes.Equal(again.Record, b.Record) ||
			!bytes.Equal(again.Checkpoint, b.Checkpoint) || len(again.Proof) != len(b.Proof) {
			t.Fatalf("round trip differs: %v", err)
		}
	})
}

func FuzzNoteReader(f *testing.F) {
	f.Add([]byte("o\n1\nAAAA\n\n— k sig\n\no\n2\nBBBB\n\n— k sig\n\n"))
	f.Add([]byte("o\n1\nAAAA\n\n— k sig\n\no\n2\nBB"))
	f.Fuzz(func(t *testing.T, data []byte) {
		nr := NewNoteReader(bytes.NewReader(data))
		var out []byte
		for range len(data) + 1 {
			rec, err := nr.Next()
			if err != nil {
				if err == io.EOF && nr.Offset() != int64(len(data)) {
					t.Fatalf("EOF at offset %d of %d", nr.Offset(), len(data))
				}
				break
			}
			out = AppendRecord(out, rec)
		}
		if !bytes.Equal(out, data[:nr.Offset()]) {
			t.Fatalf("records do not rebuild the bytes read")
		}
	})
}

func FuzzParseSegmentRecord(f *testing.F) {
	h := "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	f.Add(segmentHeader + "\nk/events.jsonl\nevents-20261206T061500Z-000001.jsonl\n0\n3\n" + h + "\n" + h + "\n")
	f.Add(segmentHeader + "\nk/events.jsonl\nevents-20261206T061500Z-000002.jsonl\n3\n1\n" + h + "\n" + h + "\n" + h + "\n")
	f.Add(retentionHeader + "\nk/events.jsonl\nevents-20261206T061500Z-000001.jsonl\n0\n3\n")
	f.Add(genesisHeader + "\nk/events.jsonl\nevents.jsonl.handover\n0\n1\n" + h + "\n")
	f.Fuzz(func(t *testing.T, text string) {
		r, err := parseSegmentRecord(text)
		if err != nil {
			return
		}
		again, err := parseSegmentRecord(string(r.format()))
		if err != nil || again.Name != r.Name || again.First != r.First || again.Count != r.Count ||
			again.Retired != r.Retired || again.Genesis != r.Genesis || !sameHashes(again.Range, r.Range) || !sameHashes(again.EndRange, r.EndRange) {
			t.Fatalf("round trip: %+v -> %+v, %v", r, again, err)
		}
		if !r.Retired {
			if _, err := r.Start(); err != nil {
				t.Fatalf("a parsed record's start range does not fit: %v", err)
			}
		}
	})
}

// A handover note that parses formats back to the same text, and the
// parser never panics. Seeds: testdata/fuzz/FuzzParseHandover.
func FuzzParseHandover(f *testing.F) {
	f.Add([]byte("a/events.jsonl\n8\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\nfinal\nnext-key b+3b1f8ad0+AXbeEBf4m6Y5U0sV4y8J8lU8Sl1xZf3u3yWtGQZ8cFzm\nnext-origin b/events.jsonl\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		h, ok, err := ParseHandover(text)
		if err != nil || !ok {
			return
		}
		if h.NextOrigin == "" || h.NextKey == "" {
			t.Fatalf("accepted %q without a next origin or key", text)
		}
		if _, ok2, err := ParseHandover(h.Format()); err != nil || !ok2 {
			t.Fatalf("formatted handover does not parse: %v", err)
		}
	})
}
