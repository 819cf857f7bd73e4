package integrity

import (
	"errors"
	"fmt"
	"path/filepath"

	"golang.org/x/mod/sumdb/tlog"
)

// lineCheck is hashLines' state while it reads a file's lines against the
// store. The store is walked from its first hash, as verify walks it
// (storeWalker), or on from what this sealer checked before (storeMark):
// damage in its signed part, up to the newest checkpoint, refuses the
// file, for verify calls that store damaged too. Its hashes after the
// checkpoint are signed by nothing and verify does not read them: where
// they disagree with the file or with each other (a crash before the
// checkpoint, a file cut back after them), the store is cut back there
// and the lines after are hashed again, with a warning.
type lineCheck struct {
	l *fileLog
	// name is the file read: the active file, or a closed segment no
	// record names yet (a rotation not sealed, or a file put there).
	name   string
	store  *hashStore
	walker *storeWalker
	tree   Frontier // the lines' own tree, from the signed range at l.first
	// had is the records the store holds and the walk compares; signed
	// those the newest checkpoint covers (at least l.first).
	had, signed int64
	i           int64     // leaf index of the next line
	prev        tlog.Hash // the last line's record hash
	rootAtLast  tlog.Hash
	walked      bool // the walk is over: every line from had on is added
	// storeErr is damage found in the signed part: the lines are still
	// read to the end, so that a line that does not match the checkpoint
	// is reported first, as verify does, and nothing is added over it.
	storeErr error
}

// rebuildStoreHint tells how a damaged store is written again.
const rebuildStoreHint = "move it aside; the collector rebuilds the store of a log without closed segments itself, " +
	"and `sandboxaudit log rebuild-store` that of a rotated log, each checked against the signed checkpoints"

func (l *fileLog) newLineCheck(name string, store *hashStore) (*lineCheck, error) {
	tree, err := l.treeAtFirst()
	if err != nil {
		return nil, err
	}
	var cp Checkpoint
	signed := l.first
	if l.hasLast {
		cp, signed = l.last, max(l.last.N, l.first)
	}
	return &lineCheck{l: l, name: name, store: store, walker: l.storeWalker(store, cp), tree: tree,
		had: store.n, signed: signed, i: l.first}, nil
}

// line takes the record hash of the next line.
func (c *lineCheck) line(h tlog.Hash) error {
	defer func() { c.prev, c.i = h, c.i+1 }()
	l := c.l
	if l.hasLast && l.last.N > l.first && c.i < l.last.N {
		c.tree.Push(h)
		if c.tree.Size() == l.last.N {
			c.rootAtLast = c.tree.Root()
		}
	}
	if c.storeErr != nil {
		return nil
	}
	if c.i < c.had {
		want, err := c.walker.leaf(c.i)
		if err != nil {
			return c.walkFailed(err, &h)
		}
		if want == h {
			return nil
		}
		if c.i >= c.signed {
			return c.cut(c.i, fmt.Sprintf("line %d differs from its hash", c.i-l.first+1), &h)
		}
		return c.differs()
	}
	if !c.walked {
		// Nothing is added over hashes not checked.
		if err := c.finishWalk(&h); err != nil {
			return err
		}
		if c.storeErr != nil || c.store.n > c.i {
			return nil // refused, or a cut added h
		}
	}
	return c.store.add(h)
}

// differs refuses the line just read, whose hash is not the one sealed
// for it. In a closed segment no record names, the file is more likely
// one put there under a segment's name than a changed line: it is named,
// since the active file's lines may be intact.
func (c *lineCheck) differs() error {
	l := c.l
	const verifyHint = "`sandboxaudit verify --key` checks the lines against the signed checkpoints alone; if it passes, the store is what was damaged " +
		"(it is derived data: " + rebuildStoreHint + ")"
	if c.name != l.path {
		return tampered(l.path, "line %d of %s (line %d of the log), a closed segment which no segment record names, differs from the hash sealed for it in %s: "+
			"a file put there under a segment's name is not the log's (move it out of the directory), or the line or that store was changed. "+verifyHint,
			c.i-l.first+1, filepath.Base(c.name), c.i+1-l.segLog.Lead(), c.store.f.Name())
	}
	return tampered(l.path, "line %d differs from the hash sealed for it in %s: the line or that store was changed. "+verifyHint,
		c.i-l.first+1, c.store.f.Name())
}

// end finishes the walk once the lines are read: the hashes the last
// record completes, and a store that holds more records than the file
// lines, in its unsigned part, is cut back to them.
func (c *lineCheck) end() error {
	if c.storeErr != nil || c.walked {
		return nil
	}
	if c.i == c.had {
		return c.finishWalk(nil)
	}
	if c.i < c.had && c.i >= c.signed {
		if err := c.walker.through(c.i); err != nil {
			return c.walkFailed(err, nil)
		}
		return c.cut(c.i, fmt.Sprintf("the file ends at line %d", c.i-c.l.first), nil)
	}
	return nil
}

// finishWalk reads the store's hashes after the last record compared.
func (c *lineCheck) finishWalk(next *tlog.Hash) error {
	if err := c.walker.finish(); err != nil {
		return c.walkFailed(err, next)
	}
	c.walked = true
	return nil
}

// walkFailed sorts a walk's error: damage in the signed part becomes the
// refusal, naming the store in verify's words; damage after it cuts the
// store back to the record whose hashes are wrong. next is the line being
// taken, if any, added after that record; any other error is returned.
func (c *lineCheck) walkFailed(err error, next *tlog.Hash) error {
	var d *storeDamage
	if !errors.As(err, &d) {
		return err
	}
	if d.at >= c.signed {
		return c.cut(d.at, d.msg, next)
	}
	c.storeErr = tampered(c.l.path, "the hash store %s is damaged (%v); the lines may be intact: `sandboxaudit verify --key` checks them "+
		"against the signed checkpoints alone. The store is derived data: "+rebuildStoreHint, c.store.f.Name(), d.msg)
	return nil
}

// cut cuts the store back to n records, in its unsigned part, and adds
// again the lines read from there: the last line read, when n is its
// record (the walk found the hashes it completes wrong), and next.
func (c *lineCheck) cut(n int64, why string, next *tlog.Hash) error {
	if err := c.store.cutTo(n); err != nil {
		return fmt.Errorf("%s: %w", c.l.path, err)
	}
	c.had, c.walked = n, true
	c.l.repairs = append(c.l.repairs, fmt.Sprintf("the hash store's hashes after the newest checkpoint, which nothing signs, disagree with the file from line %d (%s): "+
		"cut back there, and the lines from there hashed again; the signed lines are intact", n-c.l.first+1, why))
	if n < c.i {
		if err := c.store.add(c.prev); err != nil {
			return err
		}
	}
	if next == nil {
		return nil
	}
	return c.store.add(*next)
}
