package witness_test

import (
	"bytes"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/internal/witness"
)

// A request body that parses formats back to the same bytes, and the
// parser never panics nor accepts more than the protocol's bounds.
// Seeds: testdata/fuzz/FuzzParseAddCheckpointBody.
func FuzzParseAddCheckpointBody(f *testing.F) {
	f.Add([]byte("old 0\n\nexample.com/log\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n\u2014 example.com/log AAAA\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		old, proof, signed, err := witness.ParseAddCheckpointBody(body)
		if err != nil {
			return
		}
		if len(proof) > 63 || old < 0 || old == 0 && len(proof) > 0 {
			t.Fatalf("accepted old=%d with %d proof lines", old, len(proof))
		}
		if got := witness.AddCheckpointBody(old, proof, signed); !bytes.Equal(got, body) {
			t.Fatalf("round trip:\n%q\n%q", body, got)
		}
	})
}

// A 409 body that parses is exactly the size and a newline.
// Seeds: testdata/fuzz/FuzzParseConflictSize.
func FuzzParseConflictSize(f *testing.F) {
	f.Add([]byte("17\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		n, err := witness.ParseConflictSize(body)
		if err != nil {
			return
		}
		if n < 0 || string(body) != itoa(n)+"\n" {
			t.Fatalf("%q parsed as %d", body, n)
		}
	})
}

// Signature lines that split join back to the answer, each line a note
// signature line. Seeds: testdata/fuzz/FuzzSplitSignatureLines.
func FuzzSplitSignatureLines(f *testing.F) {
	f.Add([]byte("\u2014 w.example/w AAAA\n\u2014 w.example/x BBBB\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		lines, err := witness.SplitSignatureLines(body)
		if err != nil {
			return
		}
		if !bytes.Equal(bytes.Join(lines, nil), body) {
			t.Fatalf("lines do not join back to %q", body)
		}
		for _, l := range lines {
			if !bytes.HasPrefix(l, []byte("\u2014 ")) || !bytes.HasSuffix(l, []byte("\n")) || bytes.Count(l, []byte("\n")) != 1 {
				t.Fatalf("bad line %q", l)
			}
		}
	})
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
