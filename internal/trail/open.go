package trail

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/zstdread"
)

// StdinName is the path that stands for standard input.
const StdinName = "-"

// zstdMagic starts every zstd frame (RFC 8878).
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// open opens one source for reading, decompressing a zstd segment
// whatever its name. A path that is not a regular file (a FIFO, a device)
// is refused so the tool cannot hang on it; read a pipe as "-". A
// compressed stream that does not decode to its end fails a read with a
// *zstdread.DamagedError; an error reading the file is returned as it is.
// br is reset to read the source (nil: a new buffer). The bytes read go to
// tap too, unless it is nil; ext bounds and counts them.
func open(name string, stdin io.Reader, br *bufio.Reader, tap io.Writer, ext extent) (io.ReadCloser, error) {
	var rc io.ReadCloser
	if name == StdinName {
		rc = io.NopCloser(stdin)
	} else {
		f, _, err := fsutil.OpenRegular(name, os.O_RDONLY, 0)
		if errors.Is(err, os.ErrNotExist) {
			if moved := movedTo(name); moved != "" {
				if mf, _, merr := fsutil.OpenRegular(moved, os.O_RDONLY, 0); merr == nil {
					f, err = mf, nil
				}
			}
		}
		if errors.Is(err, fsutil.ErrNotRegular) {
			return nil, fmt.Errorf("%w; read a pipe as - from stdin", err)
		}
		if err != nil {
			return nil, err
		}
		rc = f
	}
	src := io.Reader(rc)
	if ext.limit >= 0 {
		src = io.LimitReader(src, ext.limit)
	}
	if ext.count != nil {
		src = &countingReader{r: src, n: ext.count}
	}
	if tap != nil {
		src = io.TeeReader(src, tap)
	}
	if br == nil {
		br = bufio.NewReaderSize(src, 256<<10)
	} else {
		br.Reset(src)
	}
	head, _ := br.Peek(len(zstdMagic))
	if !bytes.Equal(head, zstdMagic) {
		return readCloser{br, rc}, nil
	}
	zr, err := zstdread.NewReader(br)
	if err != nil {
		_ = rc.Close()
		return nil, fmt.Errorf("%s: zstd: %w", name, err)
	}
	return readCloser{zr, closers{zr.Close, rc}}, nil
}

// movedTo is where a live trail's file listed as name went since it was
// listed, or "": a closed segment compressed is in its .zst; an active
// file rotated away, before the next one was created, is the newest
// closed segment beside it.
func movedTo(name string) string {
	if filesink.IsSegment(name) {
		if strings.HasSuffix(name, filesink.ZstdSuffix) {
			return ""
		}
		return name + filesink.ZstdSuffix
	}
	segs, err := filesink.Segments(name)
	if err != nil || len(segs) == 0 {
		return ""
	}
	return segs[len(segs)-1].Path
}

type readCloser struct {
	io.Reader
	io.Closer
}

// closers closes a zstd decoder, then the file under it.
type closers struct {
	dec  func()
	file io.Closer
}

func (c closers) Close() error {
	c.dec()
	return c.file.Close()
}

// extent bounds a source's read (limit bytes; -1: to its end) and counts
// the bytes read into count (nil: not counted), before decompression.
type extent struct {
	limit int64
	count *int64
}

// countingReader adds the bytes read from r to *n.
type countingReader struct {
	r io.Reader
	n *int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	*c.n += int64(k)
	return k, err
}
