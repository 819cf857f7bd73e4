package integrity

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/internal/plural"
)

// Failure is the first integrity check an audit file failed: a line (from
// 1) or a checkpoint record (from 1) of its sidecar, or both.
type Failure struct {
	Line       int64
	Checkpoint int
	Msg        string
}

func (f *Failure) Error() string { return f.Msg }

// CheckResult is what Checker found.
type CheckResult struct {
	Lines       int64 // complete lines (leaves) in the file
	Checkpoints int   // checkpoint records checked
	Sealed      int64 // lines covered by the newest checkpoint
	Failure     *Failure
	// StoreDamage says why the hash store does not hold the tree of the
	// newest checkpoint the lines matched (judgeStore, as for a trail):
	// those lines are intact, the derived store is not (prove needs it).
	StoreDamage string
	// StoreUnused says why the hash store could not be opened (a symlink
	// or a FIFO in its place): nothing is known of the lines from it.
	StoreUnused string
	// Origin is the checkpoints' origin ("<key name>/<file name>", or
	// "<key name>/<directories>/<file name>" below a templated directory,
	// as the collector writes it), for OriginNames.
	Origin string
	// originFile is Origin without the verifier's key name.
	originFile string
	// Given says, for each checkpoint given (ProveAlso), whether the file
	// extends it.
	Given []GivenProof
}

// OriginNames reports whether the checkpoints' origin names the file at
// path: its file name starts with the origin's, so a rotated copy
// (events.jsonl.1, events.jsonl-20261203) still matches, and its
// directories end with the origin's. A file whose checkpoints name another
// may have been swapped for another file sealed with the same key; its
// lines still match those checkpoints.
func (r CheckResult) OriginNames(path string) bool {
	return r.Origin == "" || namesFile(r.originFile, path)
}

// Checker verifies an audit file, streamed through Writer, against its
// signed checkpoints: every checkpoint's signature, each checkpoint's root
// against the file's first N lines, and each checkpoint consistent with the
// one before (tlog.ProveTree/CheckTree over the hash store, when present).
// Memory stays flat in the file size: the tree is folded as lines stream
// by (Frontier), and checkpoints and store hashes are read as they are
// reached.
type Checker struct {
	path     string
	verifier note.Verifier
	cpFile   *os.File
	notes    *NoteReader
	store    *os.File // nil when the file has no hash store
	storeR   *bufio.Reader
	storeAt  int64 // stored-hash index storeR is at
	storeMax int64 // stored hashes in the store

	hasher *LeafHasher
	tree   Frontier
	// storeTree folds the store's record hashes as tree folds the file's:
	// only a store whose tree has a checkpoint's signed root may say which
	// line changed.
	storeTree Frontier
	cpNum     int
	next      *Checkpoint
	prev      *Checkpoint
	// firstDiff is the first line whose hash differs from the store's,
	// used to say which line a failed checkpoint is about.
	firstDiff int64
	res       CheckResult
	// given are checkpoints from elsewhere the file must extend.
	given givenSet
}

// NewChecker opens the sidecars of the audit file at path. A file without a
// checkpoints sidecar fails: there is nothing to check it against.
func NewChecker(path string, v note.Verifier) (*Checker, error) {
	c := &Checker{path: path, verifier: v}
	// A FIFO in a sidecar's place must not hang verify (fsutil.OpenRegular).
	cp, _, err := openRegular(CheckpointsPath(path), os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, fmt.Errorf("open checkpoints: %w", err)
	}
	c.cpFile, c.notes = cp, NewNoteReader(cp)
	switch st, fi, err := openRegular(StorePath(path), os.O_RDONLY|noFollow, 0); {
	case err == nil:
		c.store = st
		c.storeMax = fi.Size() / tlog.HashSize
		c.storeR = bufio.NewReaderSize(st, 64<<10)
	case !errors.Is(err, os.ErrNotExist):
		// A symlink or a FIFO in its place is not ignored in silence.
		c.res.StoreUnused = err.Error()
	}
	c.hasher = NewLeafHasher(c.leaf)
	c.advance()
	c.atSize()
	return c, nil
}

// Writer takes the audit file's bytes, in order, from the first.
func (c *Checker) Writer() io.Writer { return c.hasher }

// Close releases the sidecars.
func (c *Checker) Close() error {
	err := c.cpFile.Close()
	if c.store != nil {
		err = errors.Join(err, c.store.Close())
	}
	return err
}

func (c *Checker) fail(line int64, cp int, format string, args ...any) {
	if c.res.Failure == nil {
		c.res.Failure = &Failure{Line: line, Checkpoint: cp, Msg: fmt.Sprintf(format, args...)}
	}
}

// advance reads the next checkpoint record, checking its signature and
// that it does not go back.
func (c *Checker) advance() {
	c.next = nil
	if c.res.Failure != nil {
		return
	}
	rec, err := c.notes.Next()
	if err == io.EOF {
		return
	}
	num := c.cpNum + 1
	if err != nil {
		c.fail(0, num, "checkpoint #%d: %v", num, err)
		return
	}
	cp, err := OpenCheckpoint(rec, c.verifier)
	if err != nil {
		c.fail(0, num, "checkpoint #%d: %v", num, err)
		return
	}
	c.cpNum = num
	c.res.Origin = cp.Origin
	c.res.originFile = originFileOf(cp.Origin, c.verifier.Name())
	if c.prev != nil && cp.Origin != c.prev.Origin {
		c.fail(0, num, "checkpoint #%d: origin %q differs from %q of checkpoint #%d", num, cp.Origin, c.prev.Origin, num-1)
		return
	}
	if c.prev != nil && cp.N < c.prev.N {
		c.fail(0, num, "checkpoint #%d: tree size %d is smaller than %d of checkpoint #%d", num, cp.N, c.prev.N, num-1)
		return
	}
	c.next = &cp
}

// leaf is called for each complete line.
func (c *Checker) leaf(h tlog.Hash) error {
	c.tree.Push(h)
	c.res.Lines = c.tree.Size()
	if c.given.due(c.tree.Size()) {
		c.given.reach(&c.tree, c.path, c.where)
	}
	if c.res.Failure != nil {
		return nil
	}
	if c.store != nil {
		if want, ok := c.storeLeaf(c.tree.Size() - 1); ok {
			c.storeTree.Push(want)
			if c.firstDiff == 0 && want != h {
				c.firstDiff = c.tree.Size()
			}
		}
	}
	c.atSize()
	return nil
}

// atSize checks every checkpoint whose tree size the stream has reached.
func (c *Checker) atSize() {
	for c.next != nil && c.next.N == c.tree.Size() && c.res.Failure == nil {
		cp := c.next
		if c.tree.Root() != cp.Hash {
			c.failRoot(cp)
			return
		}
		c.res.Checkpoints = c.cpNum
		c.res.Sealed = cp.N
		c.prev = cp
		c.advance()
	}
}

func (c *Checker) failRoot(cp *Checkpoint) {
	from := int64(1)
	if c.prev != nil {
		from = c.prev.N + 1
	}
	storeSigned := c.storeMatches(cp)
	if c.firstDiff >= from && storeSigned {
		c.fail(c.firstDiff, c.cpNum, "line %d: changed, removed or moved; the %s %s not match the root hash of checkpoint #%d",
			c.firstDiff, plural.First(cp.N, "line"), plural.Pick(cp.N, "does", "do"), c.cpNum)
		return
	}
	why := "no hash store to tell which line"
	switch {
	case c.store != nil && c.firstDiff > 0:
		// Lines the checkpoint before matched, or a store whose tree is
		// not the one signed: the store was changed and cannot be trusted.
		why = "the hash store does not match the signed checkpoints either, so it cannot tell which line"
	case c.store != nil && c.storeLeaves() < cp.N:
		why = fmt.Sprintf("the hash store holds only %s, so it cannot tell which line", plural.Count(c.storeLeaves(), "line"))
	case c.store != nil:
		why = "the hash store agrees with the file, so the store was rebuilt or changed too, " +
			"or the checkpoints are another file's; it cannot tell which line"
	}
	c.fail(from, c.cpNum, "%s: changed, removed or moved; %s not match the root hash of checkpoint #%d (%s)",
		plural.Lines(from, cp.N), plural.Pick(cp.N-from+1, "it does", "they do"), c.cpNum, why)
}

// storeLeaves is how many lines the store holds hashes of.
func (c *Checker) storeLeaves() int64 {
	if c.store == nil {
		return 0
	}
	return recordsForHashCount(c.storeMax)
}

// storeMatches reports whether the store's record hashes fold to cp's
// signed root (its interior hashes are not trusted for this): only then
// may they say which line changed.
func (c *Checker) storeMatches(cp *Checkpoint) bool {
	return c.store != nil && c.storeTree.Size() == cp.N && c.storeTree.Root() == cp.Hash
}

// storeLeaf reads record i's hash from the store sequentially.
func (c *Checker) storeLeaf(i int64) (tlog.Hash, bool) {
	idx := tlog.StoredHashIndex(0, i)
	if idx >= c.storeMax || idx < c.storeAt {
		return tlog.Hash{}, false
	}
	if _, err := c.storeR.Discard(int((idx - c.storeAt) * tlog.HashSize)); err != nil {
		c.storeMax = 0
		return tlog.Hash{}, false
	}
	var h tlog.Hash
	if _, err := io.ReadFull(c.storeR, h[:]); err != nil {
		c.storeMax = 0
		return tlog.Hash{}, false
	}
	c.storeAt = idx + 1
	return h, true
}

// Origin is the log's origin, from its first checkpoint ("" when that
// cannot be read).
func (c *Checker) Origin() string { return c.res.Origin }

// ProveAlso adds a signed checkpoint kept elsewhere (an auditor's copy, a
// witness's), of this log: the file's first N lines must have its root.
// Call it before writing the file's bytes.
func (c *Checker) ProveAlso(cp Checkpoint) {
	c.given.add(cp)
	c.given.reach(&c.tree, c.path, c.where)
}

// where names the line the tree ends at.
func (c *Checker) where() string { return fmt.Sprintf("up to line %d of %s", c.tree.Size(), c.path) }

// Finish reports the result once the whole file has been written.
func (c *Checker) Finish() CheckResult {
	c.res.Given = c.given.finish(c.tree.Size(), c.path, func(Checkpoint) error {
		return errors.New("its lines were not read")
	})
	if c.res.Failure == nil && c.next != nil && c.firstDiff > 0 {
		c.fail(c.firstDiff, c.cpNum, "line %d: changed, removed or moved; the file no longer matches checkpoint #%d (%d lines, the file has %d)",
			c.firstDiff, c.cpNum, c.next.N, c.tree.Size())
	}
	if c.res.Failure == nil && c.next != nil {
		torn := ""
		if c.hasher.Partial() {
			torn = ", and a torn last line without its newline"
		}
		c.fail(c.tree.Size(), c.cpNum, "checkpoint #%d covers %d lines but the file has only %s%s (cut back, or lines deleted)",
			c.cpNum, c.next.N, plural.Count(c.tree.Size(), "complete one"), torn)
	}
	if c.res.Failure == nil && c.cpNum == 0 {
		if n := c.storeLeaves(); n > 0 {
			c.fail(0, 0, "no checkpoint in %s, but the hash store holds the hashes of %s: "+
				"the checkpoints were removed, or the first seal was cut short", CheckpointsPath(c.path), plural.Count(n, "line"))
		} else {
			c.fail(0, 0, "no checkpoint in %s: nothing is sealed yet", CheckpointsPath(c.path))
		}
	}
	if c.prev != nil && c.res.StoreUnused == "" {
		// A single file needs no store (the collector hashes it again),
		// so a missing one is no finding.
		c.res.StoreUnused, c.res.StoreDamage = judgeStore(c.path, *c.prev, false)
	}
	return c.res
}
