package integrity

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
)

// errNoStore is CheckStore's error for a store that is not there.
var errNoStore = errors.New("there is no hash store")

// judgeStore is verify's one verdict on the hash store of the audit path,
// for a single file and a rotated trail alike: the whole store is checked
// against cp, the newest checkpoint the lines matched (CheckStore). A
// consistency proof between two checkpoints reads only a few of its
// hashes, and prove reads the others. unused says why the store was not
// read (a symlink or a FIFO in its place, or none where needed is set: a
// rotated log needs one), damage how it is damaged.
func judgeStore(path string, cp Checkpoint, needed bool) (unused, damage string) {
	var link *SymlinkError
	switch err := CheckStore(path, cp); {
	case err == nil:
	case errors.Is(err, errNoStore):
		if needed {
			unused = err.Error()
		}
	case errors.As(err, &link), errors.Is(err, fsutil.ErrNotRegular):
		unused = err.Error()
	default:
		damage = err.Error()
	}
	return unused, damage
}

// CheckStore reads the hash store of the audit path from its start and
// checks it holds the tree of cp, a signed checkpoint of the path's log:
// each hash it holds over two subtrees is theirs, and the first cp.N
// lines' hashes fold to cp's root. The store is derived data; this tells
// a store that --alone, --checkpoint and the collector's next seal can use
// from a damaged or foreign one. Memory stays flat in the store's size.
func CheckStore(path string, cp Checkpoint) error {
	f, fi, err := openRegular(StorePath(path), os.O_RDONLY|noFollow, 0)
	if errors.Is(err, os.ErrNotExist) {
		return errNoStore
	}
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // read-only: a close error loses nothing
	if held := fi.Size() / tlog.HashSize; held < tlog.StoredHashCount(cp.N) {
		return fmt.Errorf("it holds the hashes of %d lines, fewer than the %d of the newest checkpoint: it was cut",
			recordsForHashCount(held), cp.N)
	}
	w := newStoreWalker(f, tlog.StoredHashCount(cp.N), cp)
	if cp.N == 0 {
		return w.checkRoot()
	}
	return w.finish()
}

// storeWalker reads a store's hashes in order, once, with one buffered
// sequential read: it hands out the record hashes and checks every hash
// over two subtrees against the hashes before it, and the tree of cp.N
// records against cp's root. The sealer's full check and verify's share
// it, so the two agree on what a damaged store is.
type storeWalker struct {
	r    *bufio.Reader
	name string
	held int64 // stored hashes the walk may read
	at   int64 // stored-hash index read next
	tree Frontier
	cp   Checkpoint
	// owed is set while the hashes the last record read completes are
	// still to be read: they are checked only when the walk goes on, so
	// a changed record hash is first compared with its line.
	owed bool
	buf  tlog.Hash
	// checked: the records before it, and the hashes they complete, were
	// checked by an earlier walk of this store (storeMark), whose right
	// edge tree starts from. leaf hands their hashes out unchecked.
	checked int64
	read    int64 // hashes read or skipped
}

func newStoreWalker(f *os.File, held int64, cp Checkpoint) *storeWalker {
	return newStoreWalkerFrom(f, held, cp, 0, Frontier{})
}

// newStoreWalkerFrom walks on from the tree edge, whose records and the
// hashes they complete were checked (storeMark): it reads the hashes from
// record first's on, and checks only those after edge. cp.N must not be
// below edge's size.
func newStoreWalkerFrom(f *os.File, held int64, cp Checkpoint, first int64, edge Frontier) *storeWalker {
	from := tlog.StoredHashCount(min(first, edge.n))
	edge.roots = append([]tlog.Hash(nil), edge.roots...) // the walk folds them
	return &storeWalker{r: bufio.NewReaderSize(io.NewSectionReader(f, from*tlog.HashSize, (held-from)*tlog.HashSize), 256<<10),
		name: f.Name(), held: held, at: from, tree: edge, cp: cp, checked: edge.n}
}

// skipTo passes over the hashes before stored-hash index at.
func (w *storeWalker) skipTo(at int64) error {
	if n := at - w.at; n > 0 {
		if _, err := w.r.Discard(int(n * tlog.HashSize)); err != nil {
			return fmt.Errorf("read %s: %w", w.name, err)
		}
		w.at, w.read = at, w.read+n
	}
	return nil
}

// resume passes over the checked records the walk has not read.
func (w *storeWalker) resume() error { return w.skipTo(tlog.StoredHashCount(w.checked)) }

func (w *storeWalker) next() (tlog.Hash, error) {
	// Read into the walker's own buffer: a local one escapes, through
	// the io.Reader, to one allocation a hash.
	if _, err := io.ReadFull(w.r, w.buf[:]); err != nil {
		return tlog.Hash{}, fmt.Errorf("read %s: %w", w.name, err)
	}
	w.at++
	w.read++
	return w.buf, nil
}

// leaf returns record i's hash; i must not decrease between calls.
func (w *storeWalker) leaf(i int64) (tlog.Hash, error) {
	if i < w.checked {
		if err := w.skipTo(tlog.StoredHashCount(i)); err != nil {
			return tlog.Hash{}, err
		}
		return w.next()
	}
	if err := w.resume(); err != nil {
		return tlog.Hash{}, err
	}
	for {
		if err := w.settle(); err != nil {
			return tlog.Hash{}, err
		}
		h, err := w.next()
		if err != nil {
			return h, err
		}
		w.tree.roots = append(w.tree.roots, h)
		w.owed = true
		if w.tree.n == i {
			return h, nil
		}
	}
}

// settle reads the hashes the last record read completes, checking each
// against the two below it (Frontier.Push's fold, one level at a time),
// and the root when the tree has cp's size.
func (w *storeWalker) settle() error {
	if !w.owed {
		return nil
	}
	w.owed = false
	i := w.tree.n
	for m, width := i, int64(2); m&1 == 1; m, width = m>>1, width*2 {
		k := len(w.tree.roots)
		w.tree.roots[k-2] = tlog.NodeHash(w.tree.roots[k-2], w.tree.roots[k-1])
		w.tree.roots = w.tree.roots[:k-1]
		h, err := w.next()
		if err != nil {
			return err
		}
		if h != w.tree.roots[k-2] {
			return &storeDamage{at: i, msg: fmt.Sprintf("the hash it holds over %s of the log is not the one their own hashes give: the store was changed", plural.Lines(i+2-width, i+1))}
		}
	}
	w.tree.n++
	if w.tree.n == w.cp.N {
		return w.checkRoot()
	}
	return nil
}

func (w *storeWalker) checkRoot() error {
	if w.tree.Root() != w.cp.Hash {
		return &storeDamage{at: w.cp.N - 1, msg: fmt.Sprintf("its %s %s not have the root hash of the newest checkpoint: it is another log's store, or was changed",
			plural.First(w.cp.N, "line"), plural.Pick(w.cp.N, "does", "do"))}
	}
	return nil
}

// storeDamage is a walk's finding that the store does not hold a tree, at
// the hashes record at (a leaf index) completes: the sealer refuses it,
// or cuts an unsigned tail back, where a failed read is only an error.
type storeDamage struct {
	at  int64
	msg string
}

func (d *storeDamage) Error() string { return d.msg }

// through checks the records before n and the hashes they complete.
func (w *storeWalker) through(n int64) error {
	if err := w.resume(); err != nil {
		return err
	}
	for {
		if err := w.settle(); err != nil {
			return err
		}
		if w.tree.n >= n {
			return nil
		}
		if _, err := w.leaf(w.tree.n); err != nil {
			return err
		}
	}
}

// finish checks the hashes after the last record read.
func (w *storeWalker) finish() error {
	if err := w.resume(); err != nil {
		return err
	}
	if err := w.settle(); err != nil {
		return err
	}
	for w.at < w.held {
		if _, err := w.leaf(w.tree.n); err != nil {
			return err
		}
		if err := w.settle(); err != nil {
			return err
		}
	}
	return nil
}
