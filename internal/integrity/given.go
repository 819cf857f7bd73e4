package integrity

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/sandboxaudit/sandboxaudit/internal/plural"
)

// GivenProof is what verify found of a checkpoint given from elsewhere (an
// auditor's copy, a witness's) against the whole log read: whether that
// log extends it, its first Size leaves having the checkpoint's root.
type GivenProof struct {
	// Given is the checkpoint's place among those given, from 0.
	Given int
	Size  int64
	// ByStore: the checkpoint's lines were not all read (retention removed
	// some), so a consistency proof from the hash store leads from its
	// root to the tree of the lines read.
	ByStore bool
	// Problem says why the log read is not shown to extend it; empty when
	// it is.
	Problem string
}

// givenSet checks checkpoints given from elsewhere against a tree as it is
// folded: when the tree reaches a checkpoint's size it must have its root.
// A size the tree skips (it restarts past it from a signed compact range)
// is left for a consistency proof at the end.
type givenSet struct {
	cps     []givenCheckpoint // by size
	next    int               // the first not reached yet
	notRead []int             // indexes into cps skipped by the tree
	// lead is the leaves before the log's first line (a handover's), left
	// out of the line counts named.
	lead int64
}

type givenCheckpoint struct {
	cp    Checkpoint
	proof GivenProof
}

// add takes the next checkpoint given.
func (g *givenSet) add(cp Checkpoint) {
	gc := givenCheckpoint{cp: cp, proof: GivenProof{Given: len(g.cps), Size: cp.N}}
	i, _ := slices.BinarySearchFunc(g.cps[g.next:], cp.N, func(c givenCheckpoint, n int64) int { return cmp.Compare(c.cp.N, n) })
	g.cps = slices.Insert(g.cps, g.next+i, gc)
}

// due reports whether the tree of size leaves reached a checkpoint given.
func (g *givenSet) due(size int64) bool { return g.next < len(g.cps) && g.cps[g.next].cp.N <= size }

// reach checks the checkpoints of the tree's size; where names the line
// the tree ends at, for a root that differs. The root is folded only when
// a checkpoint has that size.
func (g *givenSet) reach(tree *Frontier, path string, where func() string) {
	for g.next < len(g.cps) && g.cps[g.next].cp.N <= tree.Size() {
		c := &g.cps[g.next]
		g.next++
		if c.cp.N < tree.Size() {
			g.notRead = append(g.notRead, g.next-1)
			continue
		}
		if tree.Root() != c.cp.Hash {
			n := c.cp.N - g.lead
			c.proof.Problem = fmt.Sprintf("the checkpoint given (%s) is not of the history %s holds: its %s (%s) "+
				"%s not have the checkpoint's root hash, so %s changed, or the history was rewritten and sealed again with the key",
				plural.Count(n, "line"), path, plural.First(n, "line"), where(), plural.Pick(n, "does", "do"), plural.Pick(n, "it was", "they were"))
		}
	}
}

// finish settles the checkpoints the tree never reached: beyond its end,
// the log was cut back; skipped, prove decides.
func (g *givenSet) finish(size int64, path string, prove func(cp Checkpoint) error) []GivenProof {
	for i := g.next; i < len(g.cps); i++ {
		c := &g.cps[i]
		c.proof.Problem = fmt.Sprintf("the checkpoint given (%d lines) covers more than the %d lines of the log %s holds: lines were cut off the end",
			c.cp.N-g.lead, max(size-g.lead, 0), path)
	}
	for _, i := range g.notRead {
		c := &g.cps[i]
		c.proof.ByStore = true
		if err := prove(c.cp); err != nil {
			c.proof.Problem = fmt.Sprintf("the checkpoint given (%d lines) is not shown to be in the history %s holds: %v", c.cp.N-g.lead, path, err)
		}
	}
	out := make([]GivenProof, len(g.cps))
	for _, c := range g.cps {
		out[c.proof.Given] = c.proof
	}
	return out
}
