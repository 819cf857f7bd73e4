package filesink

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// A segment whose compressed copy spans several write-behind chunks is
// read back whole, from the file as the maintainer compresses it.
func TestCompressFileWriteBehind(t *testing.T) {
	var plain []byte
	for i := 0; len(plain) < 8*compressReadSize; i++ {
		plain = append(plain, auditBatch(i, 1000)...)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "seg.jsonl")
	if err := os.WriteFile(src, plain, 0o600); err != nil {
		t.Fatal(err)
	}
	dst := src + ZstdSuffix
	if err := CompressFile(context.Background(), src, dst); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) < 2*writeBehindChunk {
		t.Fatalf("compressed size %d: want over two write-behind chunks (%d) to exercise them", len(raw), writeBehindChunk)
	}
	dec, err := zstd.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	var got bytes.Buffer
	if _, err := got.ReadFrom(dec); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), plain) {
		t.Fatalf("decompressed %d bytes, want the %d plain bytes", got.Len(), len(plain))
	}
	if _, err := os.Lstat(dst + tmpSuffix); !os.IsNotExist(err) {
		t.Fatalf("temp file left behind: %v", err)
	}
}

func TestRunQueueSeesAWaitingGoroutine(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var q runQueue
	// A goroutine started here is runnable, not running: this one holds
	// the only processor. A garbage collection starting in between can
	// let it run first, so a few tries are allowed.
	seen := false
	for range 20 {
		ran := make(chan struct{})
		go close(ran)
		seen = q.waiting()
		<-ran
		if seen {
			break
		}
	}
	if !seen {
		t.Error("waiting() = false with a goroutine ready to run, 20 times")
	}
	if k := q.sample[0].Value.Kind(); k != metrics.KindUint64 {
		t.Errorf("runnable goroutines metric has kind %v: the compressor would yield after every block", k)
	}
}
