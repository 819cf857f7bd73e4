package cli

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/internal/seqset"
	"github.com/sandboxaudit/sandboxaudit/internal/trail"
)

// reportGaps says, per session, which seqs from 1 to its highest no line
// read carries: without --key they are the only trace of lines lost (a
// topic's retention, a best-effort sender, an edit), with it of those lost
// before the collector wrote them. They are warnings, since a trail whose
// lines are all there has them too (an operation failed closed in sync
// delivery took its seq, a session split across two gateways' files checked
// apart); problems with --require-contiguous; notes where the rest of the
// session may be in a segment not read (--alone) or one retention removed
// (its lowest seqs only). Sessions are
// taken in the order their first line was read, so output is stable.
func (v *verifier) reportGaps() {
	type gapped struct {
		id      uuid.UUID
		first   location
		missing int64
		ranges  []seqset.Range
		lowest  int64
	}
	var list []gapped
	for id, ss := range v.sessions {
		missing, ranges := ss.seqs.Gaps(trail.MaxMissingRanges) // as sessions shows them
		if missing > 0 {
			lowest, _ := ss.seqs.Lowest()
			list = append(list, gapped{id, ss.first, missing, ranges, lowest})
		}
	}
	slices.SortFunc(list, func(a, b gapped) int {
		return cmp.Or(cmp.Compare(a.first.file, b.first.file), cmp.Compare(a.first.line, b.first.line))
	})
	listed := 0
	for _, g := range list {
		v.sum.Missing = seqset.AddSaturating(v.sum.Missing, g.missing)
		what := describeGaps(g.missing, g.ranges) + " not in the files read"
		var line string
		switch {
		case v.alone[g.first.file]:
			line = fmt.Sprintf("session %s: note: %s; they may be in a segment not read (--alone)", g.id, what)
		case v.afterRetention[g.first.file] && g.missing == g.lowest-1:
			line = fmt.Sprintf("session %s: note: %s; they were in a segment retention removed", g.id, what)
		case v.opts.requireContiguous:
			v.sum.Problems++
			line = fmt.Sprintf("session %s: %s (lost, or in files not given)", g.id, what)
		default:
			line = fmt.Sprintf("session %s: warning: %s (lost, or in files not given)", g.id, what)
		}
		if listed++; listed <= maxListedProblems {
			_, _ = fmt.Fprintln(v.out, line)
		} else if listed == maxListedProblems+1 {
			_, _ = fmt.Fprintf(v.out, "more than %d sessions miss seqs: the others are counted in missing=, not listed\n", maxListedProblems)
		}
	}
}

// describeGaps names the missing seqs: "seq 4 is", "seqs 4–6, 9 are",
// "seqs 2, 4, 6, 8, 10 and 99994 more (99999 in all) are".
func describeGaps(missing int64, ranges []seqset.Range) string {
	return seqset.Name(missing, ranges) + plural.Pick(missing, " is", " are")
}
