package filesink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"

	"github.com/klauspost/compress/zstd"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

const (
	// compressReadSize is the read buffer: one read(2) per MB of segment.
	compressReadSize = 1 << 20
	// compressPiece is how much is fed to the encoder between two looks
	// at the run queue: one zstd block, about a millisecond of work.
	compressPiece = 128 << 10
	// compressYieldEvery is how much is compressed, at most, between two
	// yields, so the garbage collector's workers, which no run queue
	// shows, get this processor every few milliseconds.
	compressYieldEvery = 1 << 20
	// writeBehindChunk is how much compressed output is written before its
	// writeback is started; the piece before it is waited for then.
	writeBehindChunk = 512 << 10
)

// compressor writes closed segments as zstd frames, cheaply and behind the
// writers: the fastest level on one goroutine, one encoder and one buffer
// reused from segment to segment. After each block it yields if a
// goroutine waits for a processor, so a writer back from write(2) or
// fdatasync(2) gets one at once instead of after the scheduler's time
// slice, and otherwise once per megabyte. It stays behind the writers on
// the disk: the compressed file is written back a piece at a time (so its
// fsync is short and the compressor waits for the disk, not the writers),
// and the plain segment's pages are dropped from the cache as they are
// read. It keeps the process's CPU and I/O priorities: a writer's
// fdatasync(2) can wait on the compressed file's ordered data, and a
// thread at a lower CPU priority, kept off a saturated host's cores,
// holds its processor (P) and keeps every stop-the-world of the garbage
// collector waiting. The zero value is ready.
type compressor struct {
	enc *zstd.Encoder
	buf []byte
	rq  runQueue
	// written, when set, is called once a compressed copy is in place,
	// before the plain one is removed (a test races that removal).
	written func(dst string)
}

// runQueue reads how many goroutines wait for a processor (a look costs
// about 0.1 µs). The zero value is ready.
type runQueue struct {
	sample []metrics.Sample
}

// waiting reports whether a goroutine is runnable but not running; true
// when the runtime does not say.
func (q *runQueue) waiting() bool {
	if q.sample == nil {
		q.sample = []metrics.Sample{{Name: "/sched/goroutines/runnable:goroutines"}}
	}
	metrics.Read(q.sample)
	v := q.sample[0].Value
	return v.Kind() != metrics.KindUint64 || v.Uint64() > 0
}

// writeBehind writes to f and keeps its writeback a chunk behind.
type writeBehind struct {
	f                        *os.File
	written, started, waited int64
}

func (w *writeBehind) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.written += int64(n)
	if w.written-w.started >= writeBehindChunk {
		fd := w.f.Fd()
		if w.started > w.waited { // a length of 0 would mean the whole file
			writebackWait(fd, w.waited, w.started-w.waited)
		}
		writebackStart(fd, w.started, w.written-w.started)
		w.waited, w.started = w.started, w.written
	}
	return n, err
}

// write compresses in into dst through dst.tmp, made durable before the
// rename; on failure the temp file is removed.
func (c *compressor) write(ctx context.Context, in io.Reader, dst string) (err error) {
	tmp := dst + tmpSuffix
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|noFollowFlag, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = out.Close()
			_ = os.Remove(tmp)
		}
	}()
	wb := &writeBehind{f: out}
	if c.enc == nil {
		c.enc, err = zstd.NewWriter(wb, zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20))
		if err != nil {
			return err
		}
		c.buf = make([]byte, compressReadSize)
	} else {
		c.enc.Reset(wb)
	}
	if err := c.copy(ctx, in); err != nil {
		return err // the next write resets the encoder
	}
	if err := c.enc.Close(); err != nil {
		return err
	}
	if err := out.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	return fsutil.SyncDir(filepath.Dir(dst))
}

// copy feeds in to the encoder a block at a time, yielding between
// blocks when another goroutine waits, and once per read at least.
func (c *compressor) copy(ctx context.Context, in io.Reader) error {
	f, _ := in.(*os.File)
	since := 0 // bytes compressed since the last yield, across reads
	for off := int64(0); ; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, rerr := io.ReadFull(in, c.buf)
		if f != nil && n > 0 {
			dropCache(f.Fd(), off, int64(n))
			off += int64(n)
		}
		for i := 0; i < n; i += compressPiece {
			piece := c.buf[i:min(i+compressPiece, n)]
			if _, err := c.enc.Write(piece); err != nil {
				return err
			}
			if since += len(piece); since >= compressYieldEvery || c.rq.waiting() {
				runtime.Gosched()
				since = 0
			}
		}
		switch {
		case errors.Is(rerr, io.EOF), errors.Is(rerr, io.ErrUnexpectedEOF):
			return nil
		case rerr != nil:
			return rerr
		}
	}
}

// writeZstd compresses in into dst with a compressor of its own.
func writeZstd(ctx context.Context, in io.Reader, dst string) error {
	var c compressor
	return c.write(ctx, in, dst)
}

// CompressFile writes the file src as a zstd frame at dst, durably, as a
// closed segment is compressed (src is left as it is).
func CompressFile(ctx context.Context, src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	return writeZstd(ctx, in, dst)
}
