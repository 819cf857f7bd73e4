package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
)

// errNotAlone marks an --alone argument that is neither a closed
// segment nor a directory: a usage error, where a path that cannot be
// read or listed is an I/O failure.
var errNotAlone = errors.New("--alone takes closed segments (events-<time>-<seq>.jsonl[.zst]) or directories")

// aloneArgs turns --alone's arguments into closed segments: a directory
// gives every closed segment below it, and a file must be one.
func aloneArgs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		fi, statErr := os.Stat(a)
		if statErr == nil && fi.IsDir() {
			segs, err := aloneDirSegments(a)
			if err != nil {
				return nil, err
			}
			out = append(out, segs...)
			continue
		}
		if !filesink.IsSegment(a) {
			if statErr != nil {
				return nil, statErr
			}
			return nil, fmt.Errorf("%w; %s is not one", errNotAlone, a)
		}
		out = append(out, a)
	}
	return out, nil
}

// aloneDirSegments lists the closed segments below dir.
func aloneDirSegments(dir string) ([]string, error) {
	paths, l, err := trailArgs([]string{dir})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range paths {
		for _, s := range l.listedSegments(p) {
			out = append(out, s.Path)
		}
	}
	return out, nil
}

// verifySegmentAlone checks one closed segment without the rest of its
// trail: its lines against its signed segment record and the checkpoints
// inside it, then, across the segments not read, a consistency proof from
// the hash store to the newest checkpoint (with --witness, to the
// cosigned checkpoints too).
func (v *verifier) verifySegmentAlone(ctx context.Context, segment string) error {
	tr, next, reported, err := v.openSegmentAlone(segment)
	if err != nil || reported {
		return err
	}
	if next != nil {
		before := v.opts.key
		v.opts.key = next
		defer func() { v.opts.key = before }()
	}
	tc, err := integrity.NewTrailChecker(tr, v.opts.key)
	if err != nil {
		return fmt.Errorf("%s: %w", tr.Path, err)
	}
	defer func() { _ = tc.Close() }()
	wc, err := v.newWitnessCheck(tr.Path, tc.Origin())
	if err != nil {
		return fmt.Errorf("%s: %w", tr.Path, err)
	}
	if wc != nil {
		defer func() { _ = wc.Close() }()
		prover := integrity.OpenTreeProver(tr.Path)
		defer func() { _ = prover.Close() }()
		wc.ProveBeyond(prover)
	}
	v.alone[len(v.files)] = true
	v.proveAlso(tc)
	if err := v.checkTrailParts(ctx, tc, tr, wc); err != nil {
		return err
	}
	v.reportAlone(segment, tr, tc.Finish(), wc)
	if next == nil && tr.Log.Genesis() != nil {
		v.noteGenesisNotFollowed(tr.Path)
		v.refuseRetiredKeyAsWitness(tr.Path)
	}
	return nil
}

// noteGenesisNotFollowed says, once for the log at path, that it starts
// from a handover note --alone does not follow: --key is the key the note
// hands over to.
func (v *verifier) noteGenesisNotFollowed(path string) {
	if v.handovers.genesisNoted[path] {
		return
	}
	v.handovers.genesisNoted[path] = true
	_, _ = fmt.Fprintf(v.out, "%s: handover: the log starts from a handover note, and --key is the key it hands over to, "+
		"so its link to the history before it is not checked: give the retiring key as --key to follow the note\n", path)
}

// openSegmentAlone opens segment's trail for --alone. A segment with no
// record is a problem it prints (reported), and the other segments are
// still checked. A segment of a log another key signs is opened with the
// key next that the log's handover note names, when --key signed that
// note (openAcrossHandover).
func (v *verifier) openSegmentAlone(segment string) (tr *integrity.Trail, next note.Verifier, reported bool, err error) {
	tr, err = integrity.OpenSegmentAlone(segment, v.opts.key)
	switch {
	case errors.Is(err, integrity.ErrNotRecorded):
		// A stray file in the directory: a problem, and the other
		// segments are still checked.
		v.sum.Problems++
		_, _ = fmt.Fprintf(v.out, "%s: integrity: %v\n", segment, strings.TrimPrefix(err.Error(), segment+": "))
		return nil, nil, true, nil
	case errors.Is(err, integrity.ErrNotSignedBy):
		tr, next = v.openAcrossHandover(segment, err)
		return tr, next, tr == nil, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	return tr, nil, false, nil
}

// openAcrossHandover opens a segment of a log that --key does not sign
// (notSigned says so) with the key its handover note names: the note
// beside the log (PATH.handover) must be a final checkpoint --key signed,
// and the log's leaf 0 that note, as verify checks across a handover. It
// follows one handover: the retired log is not read, so whether it went
// on after its final checkpoint is verify's, without --alone. Anything
// else is a problem it prints, and nil.
func (v *verifier) openAcrossHandover(segment string, notSigned error) (*integrity.Trail, note.Verifier) {
	path, _ := filesink.ActiveOf(segment) // OpenSegmentAlone took the name
	h, signed, found, err := integrity.OpenHandoverNote(path, v.opts.key)
	if !found || err != nil {
		v.sum.Problems++
		why := "no handover note beside its log hands it over from --key"
		if err != nil {
			why = fmt.Sprintf("nor does its log's handover note hand it over from --key (%v)", err)
		}
		_, _ = fmt.Fprintf(v.out, "%s: integrity: %v; %s: give --key of the key that signed it, "+
			"or verify the trail, its retired logs included, without --alone, to follow every key handover\n", segment, notSigned, why)
		return nil, nil
	}
	next, ok := v.nextKey(path, &h)
	if !ok {
		return nil, nil
	}
	tr, err := integrity.OpenSegmentAlone(segment, next)
	if err != nil {
		v.sum.Problems++
		_, _ = fmt.Fprintf(v.out, "%s: integrity: %v\n", segment, err)
		return nil, nil
	}
	notePath := integrity.HandoverPath(path)
	if why := genesisProblem(tr.Log, nil, h.NextOrigin, integrity.GenesisLeaf(signed)); why != "" {
		v.sum.Problems++
		_, _ = fmt.Fprintf(v.out, "%s: handover: the log at %s does not start from the handover note in %s, which --key signed: %s\n",
			segment, path, notePath, why)
		return nil, nil
	}
	v.openGiven(h.NextOrigin, next)
	if !v.handovers.followNoted[path] {
		v.handovers.followNoted[path] = true
		_, _ = fmt.Fprintf(v.out, "%s: handover: the log starts from the handover note in %s, the final checkpoint of the log \"%s\" that --key signed; "+
			"checked with the key it names, %s\n", path, notePath, h.Origin, integrity.KeyID(next.Name(), next.KeyHash()))
	}
	return tr, next
}

// reportAlone prints the failures, witness result, proofs, handover and
// summary line of a segment checked alone.
func (v *verifier) reportAlone(segment string, tr *integrity.Trail, res integrity.TrailResult, wc *integrity.WitnessCheck) {
	for _, f := range res.Failures {
		v.sum.Problems++
		_, _ = fmt.Fprintf(v.out, "integrity: %s\n", f)
	}
	lead := tr.Log.Lead()
	rec := tr.Parts[0].Record
	witnessed := int64(-1)
	if wc != nil {
		witnessed = v.reportAloneWitnessed(tr.Path, segment, wc, rec.End(), lead, len(res.Failures) == 0)
	}
	v.reportProofs(res.Proofs, lead, witnessed)
	v.reportAloneHandover(tr.Path, segment, res.Proofs, lead)
	upTo := ""
	if len(res.Failures) > 0 {
		upTo = " (newest and checkpoints count only what passed)"
	}
	_, _ = fmt.Fprintf(v.out, "%s: integrity: alone first_line=%d lines=%d newest=%d checkpoints=%d%s%s\n",
		segment, rec.First+1-lead, res.Lines, max(res.Sealed-lead, 0), res.Checkpoints, notRead(rec.First-lead, rec.End()-lead, res.Sealed-lead), upTo)
}

// reportAloneHandover names, for a segment of a log handed over (one in
// a retired directory), the final checkpoint: the newest checkpoint
// proved is then the one the retiring key signed as final, naming the
// key and origin the history goes on with. Checkpoints signed after it
// are a problem, as in a whole trail.
func (v *verifier) reportAloneHandover(path, segment string, proofs []integrity.SegmentProof, lead int64) {
	st, ok := v.readHandover(path)
	if !ok {
		return
	}
	h := v.finalCheckpoint(path, st)
	if h == nil {
		return
	}
	next, ok := v.nextKey(path, h)
	if !ok {
		return
	}
	in := ""
	for _, p := range proofs {
		if !p.Given && p.Size == h.N {
			in = "; the segment's lines are in that final checkpoint"
			break
		}
	}
	_, _ = fmt.Fprintf(v.out, "%s: handover: the log was retired by its final checkpoint at %s; it goes on as \"%s\", signed by %s%s\n",
		segment, plural.Count(h.N-lead, "line"), h.NextOrigin, integrity.KeyID(next.Name(), next.KeyHash()), in)
}

// reportProofs prints which checkpoint holds each recorded segment read.
// witnessed is the leaves the witnesses' quorum cosigned (-1: no
// --witness).
func (v *verifier) reportProofs(proofs []integrity.SegmentProof, lead, witnessed int64) {
	for _, p := range proofs {
		first := max(p.First+1-lead, 1)
		n := p.End - lead - first + 1
		lines, are := plural.Lines(first, p.End-lead), plural.Pick(n, "is", "are")
		how := "the lines after " + plural.Pick(n, "it", "them") + " lead to its root"
		if !p.ByLines {
			how = "a consistency proof from the hash store, checked against its signed root"
		}
		if p.Given {
			_, _ = fmt.Fprintf(v.out, "%s: integrity: %s of the log %s in the checkpoint given (%s): %s\n",
				p.Path, lines, are, plural.Count(p.Size-lead, "line"), how)
			continue
		}
		wit := ""
		switch {
		case witnessed >= p.End:
			wit = "; witnessed"
		case witnessed >= 0:
			wit = "; not witnessed"
		}
		_, _ = fmt.Fprintf(v.out, "%s: integrity: %s of the log %s in checkpoint #%d (%s, the newest): %s%s\n",
			p.Path, lines, are, p.Checkpoint, plural.Count(p.Size-lead, "line"), how, wit)
	}
}

// reportAloneWitnessed prints the witness result of a segment checked
// alone and returns the leaves the quorum cosigned: the segment passes
// when they reach its end.
func (v *verifier) reportAloneWitnessed(path, segment string, wc *integrity.WitnessCheck, end, lead int64, sealedOK bool) int64 {
	res := wc.Finish()
	v.reportDatedAhead(path, res)
	quorum := fmt.Sprintf("%d/%d", v.opts.witness.usedQuorum, len(v.opts.witness.verifiers))
	switch {
	case res.Failure != nil:
		v.sum.Problems++
		_, _ = fmt.Fprintf(v.out, "%s: witness: %s%s\n", integrity.WitnessedPath(path), res.Failure.Msg, res.ChangedMsg(sealedOK))
		return 0
	case res.Witnessed < end:
		v.sum.Problems++
		_, _ = fmt.Fprintf(v.out, "%s: witness: no checkpoint that %s witnesses cosigned holds this segment's last line (line %d of the log)\n",
			segment, quorum, end-lead)
	default:
		_, _ = fmt.Fprintln(v.out, aloneWitnessedMsg(segment, res.Witnessed-lead, quorum))
	}
	return res.Witnessed
}

// aloneWitnessedMsg words a segment checked alone that a checkpoint of
// lines lines, cosigned by the witnesses' quorum, holds.
func aloneWitnessedMsg(segment string, lines int64, quorum string) string {
	return fmt.Sprintf("%s: witness: the segment is in a checkpoint of %s that %s witnesses cosigned",
		segment, plural.Count(lines, "line"), quorum)
}

// notRead names the lines of the log outside a segment checked alone,
// which the consistency proof stands for.
func notRead(before, end, newest int64) string {
	var gaps []string
	var n int64
	if before > 0 {
		gaps, n = append(gaps, lineRange(1, before)), before
	}
	if newest > end {
		gaps, n = append(gaps, lineRange(end+1, newest)), n+newest-end
	}
	if len(gaps) == 0 {
		return ""
	}
	return "; " + plural.Pick(n, "line ", "lines ") + strings.Join(gaps, " and ") + " of the log " +
		plural.Pick(n, "is in a segment", "are in segments") + " not read"
}

// lineRange words lines from to to, both counted, without a noun: "5",
// "5-9".
func lineRange(from, to int64) string {
	if from == to {
		return strconv.FormatInt(from, 10)
	}
	return fmt.Sprintf("%d-%d", from, to)
}

// reportRetired says which lines of the log retention removed, by its
// signed records.
func (v *verifier) reportRetired(path string, tr *integrity.Trail, lead int64) {
	if tr.Retired == 0 {
		return
	}
	read := map[string]bool{}
	for _, p := range tr.Parts {
		if p.Record != nil {
			read[p.Record.Name] = true
		}
	}
	// Only the lines retention's records name: a segment removed by hand
	// between two it removed is not counted in, but named apart (missing).
	var ranges []string
	from, end, lines := int64(-1), int64(0), int64(0)
	flush := func() {
		if from >= 0 {
			ranges = append(ranges, lineRange(max(from+1-lead, 1), end-lead))
		}
	}
	for _, r := range tr.Log.Segments {
		if _, gone := tr.Log.Retired[r.Name]; !gone || read[r.Name] {
			continue
		}
		if r.First != end || from < 0 {
			flush()
			from = r.First
		}
		end = r.End()
		lines += r.Count
	}
	flush()
	_, _ = fmt.Fprintf(v.out, "%s: integrity: %s %s of the log %s removed by retention (%s, each named in a signed retention record)\n",
		path, plural.Pick(lines, "line", "lines"), strings.Join(ranges, ", "), plural.Pick(lines, "was", "were"), plural.Count(tr.Retired, "segment"))
}

// retentionLeadsTo reports whether every line of tr's log before the
// first line read was removed by retention, by its signed records: its
// sessions' lowest seqs missing are then retention's, not a loss.
func retentionLeadsTo(tr *integrity.Trail) bool {
	first := tr.Log.End()
	for _, p := range tr.Parts {
		if p.Record != nil {
			first = p.Record.First
			break
		}
	}
	for _, r := range tr.Log.Segments {
		if r.Genesis || r.End() > first {
			continue
		}
		if _, gone := tr.Log.Retired[r.Name]; !gone {
			return false
		}
	}
	return true
}

// maxGivenCheckpoints bounds --checkpoint: each is proven for every
// segment read.
const maxGivenCheckpoints = 64

// otherGiven is a --checkpoint checkpoint that --key did not sign: the
// note, and why --key does not open it.
type otherGiven struct {
	note []byte
	why  error
}

// loadGivenCheckpoints reads --checkpoint's files: each a signed
// checkpoint note (cosignatures may follow). Those the log's key verifies
// are returned in place; one signed by another key only (a later log of a
// handover chain) waits in other, its place holding no origin, until a
// final checkpoint names its key (openGiven).
func loadGivenCheckpoints(files []string, key note.Verifier) ([]integrity.Checkpoint, map[int]otherGiven, error) {
	if len(files) > maxGivenCheckpoints {
		return nil, nil, fmt.Errorf("%d files, limit %d", len(files), maxGivenCheckpoints)
	}
	var out []integrity.Checkpoint
	other := map[int]otherGiven{}
	for i, name := range files {
		b, err := readGivenCheckpoint(name)
		if err != nil {
			return nil, nil, err
		}
		cp, err := integrity.OpenCheckpoint(b, key)
		if errors.Is(err, integrity.ErrNotSignedBy) {
			other[i] = otherGiven{note: b, why: err}
		} else if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, cp)
	}
	return out, other, nil
}

// readGivenCheckpoint reads one --checkpoint file.
func readGivenCheckpoint(name string) ([]byte, error) {
	f, _, err := fsutil.OpenRegular(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	// One byte past the limit lets OpenCheckpoint name an oversized note.
	b, err := io.ReadAll(io.LimitReader(f, maxCheckpointFile+1))
	_ = f.Close() // read-only: a close error loses nothing
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// A record copied from the checkpoints sidecar keeps the blank
	// line that parts records there; the signature does not cover it.
	if len(b) <= maxCheckpointFile {
		b = append(bytes.TrimRight(b, "\n"), '\n')
	}
	return b, nil
}

// openGiven opens the --checkpoint checkpoints that --key did not sign
// with the key a verified final checkpoint names for the log origin: one
// of that log is then proven as any other (proveAlso), since verify
// checks a retired log before the log it hands over to.
func (v *verifier) openGiven(origin string, key note.Verifier) {
	for i, o := range v.opts.givenOther {
		cp, err := integrity.OpenCheckpoint(o.note, key)
		if err != nil || cp.Origin != origin {
			continue
		}
		v.opts.given[i] = cp
		delete(v.opts.givenOther, i)
	}
}

// maxCheckpointFile is above the largest checkpoint note OpenCheckpoint
// takes.
const maxCheckpointFile = 64 << 10

// givenProver is a checker of one log that takes checkpoints given from
// elsewhere: a file's, or a trail's.
type givenProver interface {
	Origin() string
	ProveAlso(integrity.Checkpoint)
}

// proveAlso hands the checker the --checkpoint checkpoints of its log
// (same origin) and returns their places among those given, in the order
// handed.
func (v *verifier) proveAlso(c givenProver) []int {
	origin := c.Origin()
	if origin == "" {
		return nil
	}
	var ids []int
	for i, cp := range v.opts.given {
		if cp.Origin == origin {
			c.ProveAlso(cp)
			v.givenUsed[i] = true
			ids = append(ids, i)
		}
	}
	return ids
}

// reportGiven prints, for each --checkpoint checkpoint of the log at path,
// that the log read extends it, or why it is not shown to. ids are the
// checkpoints' places among those given (proveAlso).
func (v *verifier) reportGiven(path string, proofs []integrity.GivenProof, ids []int, lead int64) {
	for _, p := range proofs {
		file := v.opts.givenFiles[ids[p.Given]]
		if p.Problem != "" {
			v.sum.Problems++
			_, _ = fmt.Fprintf(v.out, "%s: integrity: %s\n", file, p.Problem)
			continue
		}
		how := "the lines read lead to its root"
		if p.ByStore {
			how = "a consistency proof from the hash store leads from its root to the tree of the lines read"
		}
		_, _ = fmt.Fprintf(v.out, "%s: integrity: %s: %s\n", path, givenHolds(file, max(p.Size-lead, 0)), how)
	}
}

// givenHolds words the n lines of the log that the checkpoint given in
// file holds. One signed right after a handover holds only the note the
// log starts from: none of its lines.
func givenHolds(file string, n int64) string {
	if n == 0 {
		return "the checkpoint given in " + file + " holds none of the log's lines"
	}
	return fmt.Sprintf("%s of the log %s in the checkpoint given in %s (%s)",
		plural.Lines(1, n), plural.Pick(n, "is", "are"), file, plural.Count(n, "line"))
}

// reportUnusedGiven counts as a problem a --checkpoint checkpoint whose
// log no file verified belongs to.
func (v *verifier) reportUnusedGiven() {
	for i, cp := range v.opts.given {
		if o, ok := v.opts.givenOther[i]; ok {
			v.sum.Problems++
			_, _ = fmt.Fprintf(v.out, "%s: integrity: the checkpoint given is %v, nor by a key that a final checkpoint read "+
				"hands over to: give the retired logs before it (or their directory), or --key of the key that signed it\n",
				v.opts.givenFiles[i], o.why)
			continue
		}
		if !v.givenUsed[i] {
			v.sum.Problems++
			_, _ = fmt.Fprintf(v.out, "%s: integrity: the checkpoint given is of the log \"%s\", and no file verified is of that log\n", v.opts.givenFiles[i], cp.Origin)
		}
	}
}
