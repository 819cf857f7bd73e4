package integrity

import (
	"syscall"

	"golang.org/x/mod/sumdb/tlog"
)

// storeMark is how far the sealer has checked its store: the records
// before tree's size, and the hashes they complete, in the store file
// dev and ino name, whose right edge (compact range) is tree. A seal that
// checks a file it does not know (a closed segment, the file after a
// rotation) compares that file's lines with the checked records and
// checks the store only after them: its work follows the new data, not
// the log's age. The start's seal has no mark and reads the store whole,
// as verify does.
//
// A mark is taken only where the store's tree is the newest checkpoint's,
// and tree's root is that checkpoint's signed root: the compact range of
// a signed root is the only one that folds to it. It holds only while the
// store's change time is the one the mark saw: a write by anyone else
// since (the kernel sets the change time; no one can set it back) has the
// walk start from the first hash again. Where the change time ticks
// coarser than writes (before Linux 6.13, or a file made anew at the
// inode number), a write in the tick of the seal's own goes unseen until
// the next start reads the store whole. A seal that reads no store
// hash (the file sealed last grew) carries a mark over only when it held
// as the seal began. No seal takes one when the store changed between
// its own writes (hashStore.foreign): a write by someone else while the
// seal ran would pass for the seal's. It is dropped when a seal fails and
// when the owner lock is let go.
type storeMark struct {
	dev, ino uint64
	changed  syscall.Timespec
	tree     Frontier
}

// markStore remembers store as checked up to its end, when its tree is
// the newest checkpoint's and the store is as this sealer checked and
// wrote it: the mark held when the seal began (markUnchanged), or a walk
// of this seal checked it (walkedStore). Otherwise the next walk starts
// from the first hash. Called once the seal has written the store.
func (l *fileLog) markStore(store *hashStore) {
	if l.mark == nil && !l.walkedStore {
		return // a seal that reads no store hash does not vouch for a change
	}
	l.mark = nil
	if store.foreign || !l.hasLast || l.last.N != store.n || store.n == 0 || len(store.pending) > 0 {
		return
	}
	st, ok := statStore(store)
	if !ok {
		return
	}
	roots, err := compactRange(store.n, store)
	if err != nil {
		return
	}
	tree, err := FrontierAt(store.n, roots)
	if err != nil || tree.Root() != l.last.Hash {
		return
	}
	// The change time seen after the seal's last write, not now: a write
	// by anyone else since must not pass for the seal's.
	l.mark = &storeMark{dev: uint64(st.Dev), ino: st.Ino, changed: store.seen, tree: tree}
}

// startSeal drops a mark the store no longer matches, as a seal begins,
// and sees the store's change time for its writes to compare.
func (l *fileLog) startSeal(store *hashStore) {
	l.walkedStore = false
	st, ok := statStore(store)
	if ok {
		store.seen = st.Ctim
	}
	store.foreign = !ok
	if l.mark != nil && !l.markUnchanged(store) {
		l.mark = nil
	}
}

// storeWalker walks store on from the mark when the mark holds for it
// (cp is the newest checkpoint, if any); otherwise from the first hash.
func (l *fileLog) storeWalker(store *hashStore, cp Checkpoint) *storeWalker {
	if m := l.mark; m != nil && l.hasLast && l.markHolds(store, cp) {
		return newStoreWalkerFrom(store.f, store.stored, cp, l.first, m.tree)
	}
	return newStoreWalker(store.f, store.stored, cp)
}

// markHolds reports whether the mark is of store's file, unchanged since,
// and at or below cp, with cp's root where it is cp's size.
func (l *fileLog) markHolds(store *hashStore, cp Checkpoint) bool {
	m := l.mark
	if !l.markUnchanged(store) || store.stored < tlog.StoredHashCount(m.tree.n) || cp.N < m.tree.n {
		return false
	}
	return cp.N > m.tree.n || cp.Hash == m.tree.Root()
}

// markUnchanged reports whether store is the file the mark was taken of,
// not written since.
func (l *fileLog) markUnchanged(store *hashStore) bool {
	st, ok := statStore(store)
	return ok && uint64(st.Dev) == l.mark.dev && st.Ino == l.mark.ino && st.Ctim == l.mark.changed
}

func statStore(store *hashStore) (*syscall.Stat_t, bool) {
	fi, err := store.f.Stat()
	if err != nil {
		return nil, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return st, ok
}
