package filesink

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/zstdread"
)

// errTwinDiffers marks a plain segment whose compressed copy holds other
// bytes: one of them was changed, so neither is removed.
var errTwinDiffers = errors.New("one of them was changed; both are kept")

// SameAsCompressed reports, by streaming both, whether the plain segment
// holds the bytes its compressed copy decompresses to. It stops at the
// first difference, so a plain copy that is a sparse terabyte costs no
// more than the compressed copy. A copy that does not decompress differs.
func SameAsCompressed(plain, compressed string) (bool, error) {
	// A FIFO put in either's place must not hang the caller (verify).
	p, _, err := fsutil.OpenRegular(plain, os.O_RDONLY|noFollowFlag, 0)
	if err != nil {
		return false, err
	}
	defer func() { _ = p.Close() }()
	return sameAsCompressed(p, compressed)
}

// sameAsCompressed is SameAsCompressed for the plain bytes of r, read
// from its start.
func sameAsCompressed(r io.Reader, compressed string) (bool, error) {
	c, _, err := fsutil.OpenRegular(compressed, os.O_RDONLY|noFollowFlag, 0)
	if err != nil {
		return false, err
	}
	defer func() { _ = c.Close() }()
	dec, err := zstdread.NewReader(bufio.NewReader(c), zstd.WithDecoderLowmem(true))
	if err != nil {
		return false, err
	}
	defer dec.Close()
	return sameStreams(bufio.NewReader(r), dec)
}

// sameStreams compares two readers to their ends, a block at a time. A
// stream that fails to decompress counts as different.
func sameStreams(a, b io.Reader) (bool, error) {
	bufA, bufB := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, errA := io.ReadFull(a, bufA)
		nb, errB := io.ReadFull(b, bufB)
		if !bytes.Equal(bufA[:na], bufB[:nb]) {
			return false, nil
		}
		endA := errors.Is(errA, io.EOF) || errors.Is(errA, io.ErrUnexpectedEOF)
		endB := errors.Is(errB, io.EOF) || errors.Is(errB, io.ErrUnexpectedEOF)
		switch {
		case errA != nil && !endA:
			return false, fmt.Errorf("read: %w", errA)
		case errB != nil && !endB:
			return false, nil // the compressed copy does not decompress
		case endA || endB:
			return endA && endB, nil
		}
	}
}
