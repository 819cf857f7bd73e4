package integrity

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/mod/sumdb/tlog"
)

// maxPending bounds the hashes buffered before they are written to the
// store, so sealing a large file keeps memory flat.
const maxPending = 1 << 16

// hashStore is the "<file>.tlog" sidecar: tlog's stored hashes, 32 bytes
// each, in StoredHashIndex order. It is derived data: it can always be
// rebuilt from the audit file, and it is checked against the file before it
// is trusted.
type hashStore struct {
	f *os.File
	// n is the number of records (leaves) whose hashes are stored or
	// pending; stored is the count of hashes already in the file.
	n       int64
	stored  int64
	pending []tlog.Hash
	buf     []byte // flush's write buffer
	scratch *storeScratch
	// found: the store was on disk before this open, so a store holding
	// fewer hashes than the newest checkpoint was cut, not created.
	found bool
	// seen is the file's change time as this process last saw it: as the
	// seal began (startSeal), then after each write of its own. foreign:
	// a write found it changed, so someone else wrote the store between
	// (see storeMark).
	seen    syscall.Timespec
	foreign bool
}

// storeScratch is the pending and write buffers, kept by the sealer from
// one seal to the next so a seal round does not allocate them again.
type storeScratch struct {
	pending []tlog.Hash
	buf     []byte
}

// openStore opens (creating 0600) the hash store at path, never following a
// symlink. A tail that is not a whole tree's worth of hashes (a crash
// while appending) is cut back: the records it held are hashed again from
// the audit file.
func openStore(path string, scratch *storeScratch) (*hashStore, bool, error) {
	_, lerr := os.Lstat(path)
	f, err := openNoFollow(path, os.O_RDWR|os.O_CREATE|noFollow, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("open hash store: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, false, fmt.Errorf("stat hash store: %w", err)
	}
	count := fi.Size() / tlog.HashSize
	n := recordsForHashCount(count)
	valid := tlog.StoredHashCount(n)
	cut := valid*tlog.HashSize != fi.Size()
	if cut {
		if err := f.Truncate(valid * tlog.HashSize); err != nil {
			_ = f.Close()
			return nil, false, fmt.Errorf("cut back torn hash store: %w", err)
		}
	}
	return &hashStore{f: f, n: n, stored: valid, pending: scratch.pending[:0], buf: scratch.buf[:0], scratch: scratch, found: lerr == nil}, cut, nil
}

// recordsForHashCount is the largest n with StoredHashCount(n) <= count.
func recordsForHashCount(count int64) int64 {
	lo, hi := int64(0), count // StoredHashCount(n) >= n
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if tlog.StoredHashCount(mid) <= count {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// ReadHashes implements tlog.HashReader over the file and the pending
// hashes.
func (s *hashStore) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	if len(indexes) == 0 {
		return nil, nil
	}
	out := make([]tlog.Hash, len(indexes))
	for i, idx := range indexes {
		h, err := s.hashAt(idx)
		if err != nil {
			return nil, err
		}
		out[i] = h
	}
	return out, nil
}

// add appends the stored hashes of the next record: its record hash, then
// the hash of each subtree it completes. This is tlog.StoredHashes (the
// tests hold it to that) without its per-record allocations.
func (s *hashStore) add(h tlog.Hash) error {
	n := s.n
	s.pending = append(s.pending, h)
	for i := 0; (n>>i)&1 == 1; i++ {
		left, err := s.hashAt(tlog.StoredHashIndex(i, n>>i-1))
		if err != nil {
			return err
		}
		h = tlog.NodeHash(left, h)
		s.pending = append(s.pending, h)
	}
	s.n++
	if len(s.pending) >= maxPending {
		return s.flush()
	}
	return nil
}

// hashAt reads one stored hash, pending or in the file.
func (s *hashStore) hashAt(idx int64) (tlog.Hash, error) {
	var h tlog.Hash
	switch {
	case idx >= s.stored && idx < s.stored+int64(len(s.pending)):
		return s.pending[idx-s.stored], nil
	case idx < s.stored:
		if _, err := s.f.ReadAt(h[:], idx*tlog.HashSize); err != nil {
			return h, fmt.Errorf("read hash store at index %d: %w", idx, err)
		}
		return h, nil
	}
	return h, fmt.Errorf("hash store: index %d beyond the %d hashes held", idx, s.stored+int64(len(s.pending)))
}

// flush writes the pending hashes.
func (s *hashStore) flush() error {
	if len(s.pending) == 0 {
		return nil
	}
	buf := s.buf[:0]
	for i := range s.pending {
		buf = append(buf, s.pending[i][:]...)
	}
	s.buf = buf
	s.beforeWrite()
	_, err := s.f.WriteAt(buf, s.stored*tlog.HashSize)
	s.afterWrite()
	if err != nil {
		return fmt.Errorf("write hash store: %w", err)
	}
	s.stored += int64(len(s.pending))
	s.pending = s.pending[:0]
	return nil
}

// reset empties the store.
func (s *hashStore) reset() error {
	s.beforeWrite()
	err := s.f.Truncate(0)
	s.afterWrite()
	if err != nil {
		return fmt.Errorf("empty hash store: %w", err)
	}
	s.n, s.stored, s.pending = 0, 0, s.pending[:0]
	return nil
}

// cutTo cuts the store back to the hashes of its first n records; none
// may be pending.
func (s *hashStore) cutTo(n int64) error {
	if len(s.pending) > 0 {
		return fmt.Errorf("cut hash store back: %d hashes pending", len(s.pending))
	}
	stored := tlog.StoredHashCount(n)
	s.beforeWrite()
	err := s.f.Truncate(stored * tlog.HashSize)
	s.afterWrite()
	if err != nil {
		return fmt.Errorf("cut hash store back: %w", err)
	}
	s.n, s.stored = n, stored
	return nil
}

// size is the store's size in bytes once flushed.
func (s *hashStore) size() int64 { return s.stored * tlog.HashSize }

func (s *hashStore) close() error {
	s.scratch.pending, s.scratch.buf = s.pending[:0], s.buf[:0]
	return s.f.Close()
}

// beforeWrite notes a write by someone else since the store was last seen.
func (s *hashStore) beforeWrite() {
	if st, ok := statStore(s); !ok || st.Ctim != s.seen {
		s.foreign = true
	}
}

// afterWrite sees the change time the store's own write gave it.
func (s *hashStore) afterWrite() {
	if st, ok := statStore(s); ok {
		s.seen = st.Ctim
	} else {
		s.foreign = true
	}
}
