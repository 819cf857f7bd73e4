package filesink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/klauspost/compress/zstd"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

const (
	// compressReadSize is the read buffer: one read(2) per MB of segment.
	compressReadSize = 1 << 20
	// compressYieldEvery is how much is compressed between two yields
	// to the writers (tens of microseconds of work).
	compressYieldEvery = 32 << 10
)

// compressor writes closed segments as zstd frames, cheaply and behind the
// writers: the fastest level on one goroutine, one encoder and one buffer
// reused from segment to segment, and a yield every few kilobytes, so a
// writer back from write(2) or fdatasync(2) gets the processor at once
// instead of after the scheduler's time slice. The zero value is ready.
type compressor struct {
	enc *zstd.Encoder
	buf []byte
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
	if c.enc == nil {
		c.enc, err = zstd.NewWriter(out, zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20))
		if err != nil {
			return err
		}
		c.buf = make([]byte, compressReadSize)
	} else {
		c.enc.Reset(out)
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

// copy feeds in to the encoder, yielding between small pieces.
func (c *compressor) copy(ctx context.Context, in io.Reader) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, rerr := io.ReadFull(in, c.buf)
		for off := 0; off < n; off += compressYieldEvery {
			if _, err := c.enc.Write(c.buf[off:min(off+compressYieldEvery, n)]); err != nil {
				return err
			}
			runtime.Gosched()
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
