package spool

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"

	"github.com/sandboxaudit/sandboxaudit/internal/groupcommit"
)

// tailWindow is how many bytes before the acknowledged offset the spool
// remembers, by digest: several short lines, or the end of a long one,
// whose event ids and timestamps no other lines repeat.
const tailWindow = 4 << 10

// tail is the digest of the up to tailWindow bytes before an offset. An
// offset is a position in the file: lines removed from before it in place
// (the file rewritten under the same inode) move lines never delivered
// below it, where replay would skip them. Their bytes then no longer
// match the digest, which puts the offset in doubt.
type tail struct {
	sum [sha256.Size]byte
	ok  bool // false: unknown, so not checked
}

// tailOf is the tail of f before off; unknown at 0, where there is
// nothing to skip, and when it cannot be read.
func tailOf(f *os.File, off int64) tail {
	if off <= 0 {
		return tail{}
	}
	n := min(off, tailWindow)
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off-n); err != nil {
		return tail{}
	}
	return tail{sum: sha256.Sum256(b), ok: true}
}

// sentTail is the tail before off, the end of a replay batch just
// acknowledged: sent, the batch's bytes up to off as the round read them,
// give it without reading the file again when they reach back far
// enough; otherwise it is read (tailOf).
func sentTail(f *os.File, off int64, sent []byte) tail {
	if n := min(off, tailWindow); n > 0 && int64(len(sent)) >= n {
		return tail{sum: sha256.Sum256(sent[int64(len(sent))-n:]), ok: true}
	}
	return tailOf(f, off)
}

// tailFromHex parses a tail saved in the sidecar; unknown when absent
// (a sidecar written before tails were kept) or not a digest.
func tailFromHex(s string) tail {
	var t tail
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(t.sum) {
		return tail{}
	}
	copy(t.sum[:], b)
	t.ok = true
	return t
}

// String is the tail as the sidecar holds it, "" when unknown.
func (t tail) String() string {
	if !t.ok {
		return ""
	}
	return hex.EncodeToString(t.sum[:])
}

// matches reports whether f's bytes before off are still those t was
// taken of. An unknown tail, or one that cannot be read now, matches:
// the check can only move the offset back, never on.
func (t tail) matches(f *os.File, off int64) bool {
	if !t.ok {
		return true
	}
	now := tailOf(f, off)
	return !now.ok || now.sum == t.sum
}

// headOf is the first up to tailWindow bytes of f, a file of size bytes;
// nil when they cannot be read.
func headOf(f *os.File, size int64) []byte {
	b := make([]byte, min(size, tailWindow))
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil
	}
	return b
}

// grownHead is head, f's first bytes when it was size bytes long, grown
// to those of f now end bytes long. The batches written, appended in
// order at size, hold the new bytes, so a spool kept small by replay
// does not read its head again on every append; a head short of size (it
// could not be read) is read again.
func grownHead(f *os.File, head []byte, size, end int64, written []*groupcommit.Batch) []byte {
	if int64(len(head)) != size {
		return headOf(f, end)
	}
	for _, b := range written {
		need := tailWindow - len(head)
		if need <= 0 {
			break
		}
		head = append(head, b.Data[:min(need, len(b.Data))]...)
	}
	return head
}

// headKept reports whether f, now of size bytes, still starts with the
// bytes of head it holds. A file cut short keeps them; one whose first
// lines were removed in place does not. Bytes that cannot be read count
// as kept.
func headKept(f *os.File, head []byte, size int64) bool {
	n := min(int64(len(head)), size)
	now := make([]byte, n)
	if _, err := f.ReadAt(now, 0); err != nil {
		return true
	}
	return bytes.Equal(now, head[:n])
}
