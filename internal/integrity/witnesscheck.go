package integrity

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"time"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/internal/witness"
)

// WitnessResult is what WitnessCheck found.
type WitnessResult struct {
	Lines int64 // complete lines in the file
	// Records is the number of cosigned checkpoints read.
	Records int
	// Witnessed is the size of the longest prefix of the file that the
	// quorum of witnesses cosigned (0: none).
	Witnessed int64
	Failure   *Failure
	// Changed says the failure is a cosigned checkpoint whose root the
	// lines do not have. Whether the log key signed the changed lines
	// again is for the log's own checkpoints to tell (ChangedMsg).
	Changed bool
	// Others names (up to maxOtherCosigners, sorted) the keys of the
	// cosignatures read when none of them is by a witness key given: a
	// wrong key file, not a missing cosignature.
	Others []string
	// Future counts the cosignatures by keys given that are dated more
	// than witness.MaxClockSkew after this host's clock, which are not
	// counted; FirstFuture says where the first is.
	Future      int
	FirstFuture string
}

// maxOtherCosigners bounds WitnessResult.Others.
const maxOtherCosigners = 8

// ChangedMsg ends the message of a Changed failure: resigned says the
// lines pass the log's own checkpoints, so the key holder signed them
// again; otherwise they were changed and the log's checks fail too.
func (r WitnessResult) ChangedMsg(resigned bool) string {
	if !r.Changed || r.Failure == nil {
		return ""
	}
	if resigned {
		return ": lines were changed, and re-signed, after the witnesses saw them"
	}
	return ": lines were changed after the witnesses saw them (the log's own checkpoints do not hold them either)"
}

// WitnessCheck checks an audit file, streamed through Writer, against the
// cosigned checkpoints of its witnessed sidecar: each record's log
// signature, and each checkpoint a trusted witness cosigned against the
// file's first N lines. A witness that cosigned a checkpoint of size M
// vouches for the first M lines, so the file's witnessed prefix is the
// largest size that quorum witnesses vouch for. Memory is flat in the file
// size: records are read as the file reaches their size.
type WitnessCheck struct {
	logKey    note.Verifier
	origin    string // the log's, from its own checkpoints ("": unknown)
	witnesses note.Verifiers
	quorum    int
	file      *os.File
	notes     *NoteReader
	hasher    *LeafHasher
	tree      Frontier
	pending   []witnessedRec // records at the size the tree reaches next
	lastSize  int64          // the size of the last record read
	// skipBelow is the size the tree started at: lines before it were
	// removed by retention, and records below it cannot be checked.
	skipBelow int64
	// lead is the leaves before the log's first line (a handover's):
	// messages count lines, so line i is leaf i.
	lead    int64
	vouched map[string]int64
	others  map[string]bool
	trusted bool // a cosignature by a key given was read
	now     time.Time
	res     WitnessResult
	// prover, for a segment checked alone, proves the tree at the
	// segment's end in the cosigned checkpoints beyond it: for each
	// witness the largest it cosigned (beyond), once all are read.
	prover *TreeProver
	beyond map[string]witnessedRec
}

type witnessedRec struct {
	num     int
	c       Checkpoint
	signers []string
}

// NewWitnessCheck opens the witnessed sidecar of the audit file at path.
// A missing sidecar is no error: nothing is witnessed. origin is the log's,
// as its own checkpoints name it: a witness cosigns a tree of one origin,
// so a record of another (the same key's other log, which a witness that
// never saw it cosigns at any tree) vouches for nothing here. An empty
// origin (the log's checkpoints unreadable, which fails the log) skips it.
func NewWitnessCheck(path, origin string, logKey note.Verifier, witnesses []note.Verifier, quorum int) (*WitnessCheck, error) {
	w := &WitnessCheck{logKey: logKey, origin: origin, witnesses: note.VerifierList(witnesses...), quorum: quorum, vouched: map[string]int64{}, now: time.Now()}
	f, _, err := openRegular(WitnessedPath(path), os.O_RDONLY|noFollow, 0)
	switch {
	case err == nil:
		w.file, w.notes = f, newWitnessedReader(f)
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("open witnessed checkpoints: %w", err)
	}
	w.hasher = NewLeafHasher(w.leaf)
	w.readUpTo(0)
	return w, nil
}

// Writer takes the audit file's bytes, in order, from the first.
func (w *WitnessCheck) Writer() io.Writer { return w.hasher }

// Close releases the sidecar.
func (w *WitnessCheck) Close() error {
	if w.file == nil {
		return nil
	}
	return w.file.Close()
}

func (w *WitnessCheck) fail(line int64, rec int, format string, args ...any) {
	if w.res.Failure == nil {
		w.res.Failure = &Failure{Line: line, Checkpoint: rec, Msg: fmt.Sprintf(format, args...)}
	}
}

func (w *WitnessCheck) leaf(h tlog.Hash) error {
	w.tree.Push(h)
	w.readUpTo(w.tree.Size())
	return nil
}

// readUpTo checks the records whose size the tree has reached, and reads
// on to the first record beyond it.
func (w *WitnessCheck) readUpTo(n int64) {
	for {
		for len(w.pending) > 0 && w.pending[0].c.N <= n {
			w.settle(w.pending[0])
			w.pending = w.pending[1:]
		}
		if len(w.pending) > 0 || w.notes == nil || w.res.Failure != nil {
			return
		}
		rec, err := w.notes.Next()
		if err == io.EOF {
			w.notes = nil
			return
		}
		w.res.Records++
		num := w.res.Records
		if err != nil {
			w.fail(0, num, "cosigned checkpoint #%d: %v", num, err)
			return
		}
		c, err := OpenWitnessed(rec, w.logKey)
		if err != nil {
			w.fail(0, num, "cosigned checkpoint #%d: %v", num, err)
			return
		}
		if w.origin != "" && c.Origin != w.origin {
			w.fail(0, num, "cosigned checkpoint #%d is of the log %q, not of this log %q", num, c.Origin, w.origin)
			return
		}
		if c.N < w.lastSize {
			w.fail(0, num, "cosigned checkpoint #%d (size %d) comes after one of size %d", num, c.N, w.lastSize)
			return
		}
		w.lastSize = c.N
		w.pending = append(w.pending, witnessedRec{num: num, c: c, signers: w.cosigners(num, rec)})
	}
}

// cosigners names the trusted witnesses whose cosignature on record num
// verifies and is not dated in the future (those are noted), and notes
// the keys of the others (the log's own excepted).
func (w *WitnessCheck) cosigners(num int, rec []byte) []string {
	n, err := note.Open(rec, w.witnesses)
	var unverified *note.UnverifiedNoteError
	if errors.As(err, &unverified) {
		n, err = unverified.Note, nil
	}
	if err != nil {
		return nil
	}
	for _, s := range n.UnverifiedSigs {
		if s.Name == w.logKey.Name() && s.Hash == w.logKey.KeyHash() {
			continue
		}
		if w.others == nil {
			w.others = map[string]bool{}
		}
		if len(w.others) < maxOtherCosigners {
			w.others[KeyID(s.Name, s.Hash)] = true
		}
	}
	var out []string
	for _, s := range n.Sigs {
		w.trusted = true
		if witness.DatedAhead(s, w.now) {
			w.future(num, s)
			continue
		}
		out = append(out, KeyID(s.Name, s.Hash))
	}
	return out
}

// future notes a cosignature dated after the clock allows: the witness
// did not sign it at a time that has come, so it vouches for nothing.
func (w *WitnessCheck) future(num int, s note.Signature) {
	w.res.Future++
	if w.res.Future > 1 {
		return
	}
	when := "at a time that cannot be read"
	if t, err := torchwood.CosignatureTimestamp(s); err == nil {
		when = time.Unix(t, 0).UTC().Format(time.RFC3339)
	}
	w.res.FirstFuture = fmt.Sprintf("cosigned checkpoint #%d, by %s, dated %s", num, KeyID(s.Name, s.Hash), when)
}

// StartPart is called before each part of a trail is written: when
// retention removed the segments before it, the tree starts from the
// part's signed compact range, as the trail's checker does.
func (w *WitnessCheck) StartPart(p TrailPart, sl *SegmentLog) {
	if sl != nil {
		w.lead = sl.Lead()
	}
	// After a segment retention removed was put back, the segments
	// retention removed after it are a gap to start after again.
	n := w.tree.Size()
	switch {
	case p.Record != nil && p.Record.First > 0 && (n == 0 || p.Record.First > n && sl != nil && sl.retiredBetween(n, p.Record.First)):
		w.startAt(p.Record.Start())
	case p.Record == nil && sl != nil && sl.End() > 0 && (n == 0 || sl.retiredAfter(n)):
		// Every recorded segment is gone, or the log's only record is its
		// handover leaf: the part starts where the records end.
		w.startAt(FrontierAt(sl.End(), sl.EndRange()))
	}
}

// startAt starts the tree at t, a signed compact range: the records of
// the lines before it cannot be checked.
func (w *WitnessCheck) startAt(t Frontier, err error) {
	if err != nil {
		return // the trail's checker reports it
	}
	w.tree, w.skipBelow = t, t.Size()
	w.readUpTo(t.Size())
}

// settle checks one record now that the tree has its size.
func (w *WitnessCheck) settle(r witnessedRec) {
	if len(r.signers) == 0 || r.c.N < w.skipBelow {
		return // no trusted witness vouches for it, or its lines are gone
	}
	switch {
	case r.c.N > w.tree.Size() && w.prover != nil:
		for _, s := range r.signers {
			if w.beyond[s].c.N < r.c.N {
				w.beyond[s] = r
			}
		}
		return
	case r.c.N > w.tree.Size():
		w.fail(0, r.num, "checkpoint #%d, which witnesses %v cosigned, covers %d lines, but the file has only %d: cut back",
			r.num, r.signers, r.c.N-w.lead, max(w.tree.Size()-w.lead, 0))
		return
	case r.c.N > 0 && w.tree.Root() != r.c.Hash:
		w.res.Changed = w.res.Failure == nil
		n := r.c.N - w.lead
		w.fail(n, r.num, "the %s %s not match checkpoint #%d, which witnesses %v cosigned", plural.First(n, "line"), plural.Pick(n, "does", "do"), r.num, r.signers)
		return
	}
	for _, s := range r.signers {
		w.vouched[s] = max(w.vouched[s], r.c.N)
	}
}

// ProveBeyond makes the cosigned checkpoints beyond the lines read count,
// each proven to extend them by p: for a segment checked alone, the lines
// after it are not read.
func (w *WitnessCheck) ProveBeyond(p *TreeProver) {
	w.prover, w.beyond = p, map[string]witnessedRec{}
}

// proveBeyond proves, for each witness, the largest checkpoint it
// cosigned beyond the lines read to extend them, and counts it.
func (w *WitnessCheck) proveBeyond() {
	proven := map[int]bool{}
	for _, s := range slices.Sorted(maps.Keys(w.beyond)) {
		r := w.beyond[s]
		if !proven[r.num] {
			if err := w.prover.Prove(w.tree.Size(), w.tree.Root(), r.c); err != nil {
				w.fail(0, r.num, "checkpoint #%d, which witnesses %v cosigned, is not shown to hold the %s: %v",
					r.num, r.signers, plural.First(w.tree.Size()-w.lead, "line"), err)
				return
			}
			proven[r.num] = true
		}
		w.vouched[s] = max(w.vouched[s], r.c.N)
	}
}

// Finish returns the result once the whole file has been written.
func (w *WitnessCheck) Finish() WitnessResult {
	w.res.Lines = w.tree.Size()
	// The records beyond the file's end: one a witness cosigned means
	// the file was cut back.
	w.readUpTo(math.MaxInt64)
	if w.prover != nil && w.res.Failure == nil {
		w.proveBeyond()
	}
	sizes := make([]int64, 0, len(w.vouched))
	for _, n := range w.vouched {
		sizes = append(sizes, n)
	}
	slices.SortFunc(sizes, func(a, b int64) int { return cmp.Compare(b, a) })
	if w.quorum > 0 && len(sizes) >= w.quorum {
		w.res.Witnessed = sizes[w.quorum-1]
	}
	if !w.trusted {
		w.res.Others = slices.Sorted(maps.Keys(w.others))
	}
	return w.res
}
