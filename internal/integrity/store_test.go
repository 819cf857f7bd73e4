package integrity

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

// TestStoreMatchesTlogStoredHashes holds the store's append to
// tlog.StoredHashes, across flushes (pending and file reads both used).
func TestStoreMatchesTlogStoredHashes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.tlog")
	st, _, err := openStore(path, &storeScratch{})
	if err != nil {
		t.Fatal(err)
	}
	var want []tlog.Hash
	r := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = want[x]
		}
		return out, nil
	})
	for n := int64(0); n < 1000; n++ {
		rec := []byte{byte(n), byte(n >> 8), '\n'}
		hs, err := tlog.StoredHashes(n, rec, r)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, hs...)
		if err := st.add(tlog.RecordHash(rec)); err != nil {
			t.Fatal(err)
		}
		if n%97 == 0 {
			if err := st.flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := st.flush(); err != nil {
		t.Fatal(err)
	}
	_ = st.close()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(got)) != tlog.StoredHashCount(1000)*tlog.HashSize || len(want) != len(got)/tlog.HashSize {
		t.Fatalf("store holds %d bytes, want %d hashes", len(got), len(want))
	}
	for i, h := range want {
		if string(got[i*tlog.HashSize:(i+1)*tlog.HashSize]) != string(h[:]) {
			t.Fatalf("stored hash %d differs from tlog.StoredHashes", i)
		}
	}
}
