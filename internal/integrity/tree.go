package integrity

import (
	"bytes"
	"crypto/sha256"
	"hash"

	"golang.org/x/mod/sumdb/tlog"
)

// Frontier computes the RFC 6962 root of a growing tree in O(log n) memory:
// it keeps the roots of the perfect subtrees the leaves so far split into.
type Frontier struct {
	n     int64
	roots []tlog.Hash // largest subtree first
}

// Push adds the next leaf's record hash.
func (f *Frontier) Push(h tlog.Hash) {
	f.roots = append(f.roots, h)
	// Each trailing one bit of the old size completes a subtree.
	for m := f.n; m&1 == 1; m >>= 1 {
		k := len(f.roots)
		f.roots[k-2] = tlog.NodeHash(f.roots[k-2], f.roots[k-1])
		f.roots = f.roots[:k-1]
	}
	f.n++
}

// Size is the number of leaves pushed.
func (f *Frontier) Size() int64 { return f.n }

// Root is the tree hash of the leaves pushed so far (tlog.TreeHash).
func (f *Frontier) Root() tlog.Hash {
	if len(f.roots) == 0 {
		return tlog.Hash(sha256.Sum256(nil))
	}
	h := f.roots[len(f.roots)-1]
	for i := len(f.roots) - 2; i >= 0; i-- {
		h = tlog.NodeHash(f.roots[i], h)
	}
	return h
}

// LeafHasher turns a byte stream into RFC 6962 record hashes, one per line
// including its '\n', without holding a line in memory. Bytes after the last
// '\n' are an unfinished line, not a leaf.
type LeafHasher struct {
	h       hash.Hash
	started bool
	sum     []byte
	onLeaf  func(tlog.Hash) error
	err     error
	// zero is the RFC 6962 leaf prefix, kept here so writing it does not
	// allocate.
	zero [1]byte
	// complete counts the bytes of the complete lines hashed.
	complete int64
	pos      int64
}

// NewLeafHasher calls onLeaf with each complete line's record hash; an error
// from onLeaf stops the hasher and is returned by Write.
func NewLeafHasher(onLeaf func(tlog.Hash) error) *LeafHasher {
	return &LeafHasher{h: sha256.New(), onLeaf: onLeaf, sum: make([]byte, 0, sha256.Size)}
}

// Write hashes p; it implements io.Writer for io.TeeReader.
func (l *LeafHasher) Write(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	total := len(p)
	for len(p) > 0 {
		if !l.started {
			l.h.Reset()
			l.h.Write(l.zero[:])
			l.started = true
		}
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.h.Write(p)
			l.pos += int64(len(p))
			break
		}
		l.h.Write(p[:i+1])
		l.pos += int64(i + 1)
		l.complete = l.pos
		p = p[i+1:]
		l.started = false
		var rh tlog.Hash
		copy(rh[:], l.h.Sum(l.sum[:0]))
		if err := l.onLeaf(rh); err != nil {
			l.err = err
			return total - len(p), err
		}
	}
	return total, nil
}

// Partial reports whether bytes of an unfinished line were written.
func (l *LeafHasher) Partial() bool { return l.started }

// Complete is the number of bytes written up to the end of the last
// complete line.
func (l *LeafHasher) Complete() int64 { return l.complete }
