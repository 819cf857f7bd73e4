package integrity

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
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
	r := bufio.NewReaderSize(f, 64<<10)
	next := func() (tlog.Hash, error) {
		var h tlog.Hash
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return h, fmt.Errorf("read %s: %w", StorePath(path), err)
		}
		return h, nil
	}
	tree := Frontier{}
	for i := range cp.N {
		h, err := next()
		if err != nil {
			return err
		}
		tree.roots = append(tree.roots, h)
		// As in Frontier.Push, each trailing one bit of i completes a
		// subtree; the store holds its hash next.
		for m, width := i, int64(2); m&1 == 1; m, width = m>>1, width*2 {
			k := len(tree.roots)
			tree.roots[k-2] = tlog.NodeHash(tree.roots[k-2], tree.roots[k-1])
			tree.roots = tree.roots[:k-1]
			if h, err = next(); err != nil {
				return err
			}
			if h != tree.roots[k-2] {
				return fmt.Errorf("the hash it holds over lines %d-%d of the log is not the one their own hashes give: the store was changed", i+2-width, i+1)
			}
		}
		tree.n++
	}
	if tree.Root() != cp.Hash {
		return fmt.Errorf("its first %d lines do not have the root hash of the newest checkpoint: it is another log's store, or was changed", cp.N)
	}
	return nil
}
