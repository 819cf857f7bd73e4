package cli

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"

	"github.com/google/uuid"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/lines"
)

// repeat is a line whose seq its session had used before. Keeping every
// line's hash to classify such lines on the spot would cost memory per
// event; instead they wait here (they are rare: a resend, or a bug) and
// settleRepeats reads the inputs a second time for the first line of each
// repeated seq.
type repeat struct {
	session uuid.UUID
	spanID  string
	half    spanHalf
	eventID uuid.UUID
	hash    uint64 // maphash of the line's bytes under the run's seed
	// copies are where the later copies of this line are (the same
	// repeatSig), at most maxListedProblems; more counts the others. A
	// small compressed segment holds millions of copies of one line.
	copies []location
	more   int
}

// repeatSig is what settles a repeat, its place aside: copies of one line
// settle alike.
type repeatSig struct {
	session uuid.UUID
	spanID  string
	phase   auditevent.Phase
	op      string
	seq     int64
	eventID uuid.UUID
	hash    uint64
}

func (r *repeat) sig() repeatSig {
	return repeatSig{r.session, r.spanID, r.half.phase, r.half.op, r.half.seq, r.eventID, r.hash}
}

// addRepeat sets r aside, with the repeat it is a copy of when there is one.
func (v *verifier) addRepeat(r repeat) {
	sig := r.sig()
	i, ok := v.repeatOf[sig]
	if !ok {
		v.repeatOf[sig] = len(v.repeats)
		v.repeats = append(v.repeats, r)
		return
	}
	if first := &v.repeats[i]; len(first.copies) < maxListedProblems {
		first.copies = append(first.copies, r.half.at)
	} else {
		first.more++
	}
}

type seqKey struct {
	session uuid.UUID
	seq     int64
}

// firstLine is the first line that used a repeated seq.
type firstLine struct {
	found   bool
	hash    uint64
	eventID uuid.UUID
	at      location
}

// settleRepeats finds the first line of every repeated seq and reports
// each repeat against it. An exact copy (same event_id, same bytes) is what
// at-least-once delivery writes: it takes no part in pairing either way. Any
// other reuse is a problem and is paired like a first line.
func (v *verifier) settleRepeats(ctx context.Context) error {
	if len(v.repeats) == 0 {
		return nil
	}
	firsts := make(map[seqKey]*firstLine, len(v.repeats))
	for _, r := range v.repeats {
		firsts[seqKey{r.session, r.half.seq}] = &firstLine{}
	}
	if err := v.findFirsts(ctx, firsts); err != nil {
		return err
	}
	for _, r := range v.repeats {
		first := firsts[seqKey{r.session, r.half.seq}]
		v.settle(r, first)
		for _, at := range r.copies {
			c := r
			c.half.at = at
			v.settle(c, first)
		}
		v.settleMore(r, first)
	}
	v.repeats, v.repeatOf = nil, map[repeatSig]int{}
	return nil
}

// settleMore counts the copies of r beyond those kept, as settle would:
// an exact copy of the first line is a duplicate; any other reuse is a
// problem, and, its span's half of that phase paired by the copies kept
// before it, a second event of that phase too.
func (v *verifier) settleMore(r repeat, first *firstLine) {
	if r.more == 0 {
		return
	}
	file, n := r.copies[len(r.copies)-1].file, r.more
	switch {
	case first.found && first.eventID == r.eventID && first.hash == r.hash:
		v.sum.Duplicates += n
		if !v.opts.allowDuplicates {
			v.unlisted(file, n)
		}
	case r.spanID == "":
		v.unlisted(file, n)
	default:
		v.unlisted(file, 2*n)
	}
}

func (v *verifier) settle(r repeat, first *firstLine) {
	at, seq, sid := r.half.at, r.half.seq, r.session
	switch {
	case !first.found:
		// The file changed between the two reads (a live file rotated or
		// cut back): the reuse is certain, its kind is not.
		v.problem(at, "seq %d used twice in session %s (the first line with it could not be read again)", seq, sid)
	case first.eventID == r.eventID && first.hash == r.hash:
		v.sum.Duplicates++
		if v.opts.allowDuplicates {
			return
		}
		copyOf := "duplicate of " + v.where(first.at)
		if first.at == at {
			copyOf = "the line holds the event twice, the whole event line after its piece repeating it"
		}
		v.problem(at, "seq %d used twice in session %s: %s (same event_id and bytes; --allow-duplicates accepts resent events)",
			seq, sid, copyOf)
		return
	case first.eventID == r.eventID:
		v.problem(at, "seq %d used twice in session %s: same event_id as %s but different bytes", seq, sid, v.whereFirst(first.at, at))
	default:
		v.problem(at, "seq %d used twice in session %s (first at %s, event_id %s)", seq, sid, v.whereFirst(first.at, at), first.eventID)
	}
	v.pair(v.sessions[sid], sid, r.spanID, r.half)
}

// whereFirst names first, the place of an event before the one at: the
// piece before it when both are on one line (a piece and the whole event
// line after it), which naming the line would make the line's own copy.
func (v *verifier) whereFirst(first, at location) string {
	if first == at {
		return "the event line before it on this line"
	}
	return v.where(first)
}

// findFirsts reads the inputs again in the same order, up to the point
// where every repeated seq has been met once.
func (v *verifier) findFirsts(ctx context.Context, firsts map[seqKey]*firstLine) error {
	left := len(firsts)
	for file, name := range v.files {
		if left == 0 {
			return nil
		}
		r, done, err := v.reopen(name)
		if err != nil {
			return fmt.Errorf("%s: read again for repeated seqs: %w", name, err)
		}
		left, err = scanFirsts(ctx, r, file, firsts, left, v.seed)
		done()
		if err != nil {
			return fmt.Errorf("%s: read again for repeated seqs: %w", name, err)
		}
	}
	return nil
}

func scanFirsts(ctx context.Context, r io.Reader, file int, firsts map[seqKey]*firstLine, left int, seed maphash.Seed) (int, error) {
	lr := lines.NewReader(r, 64<<10, maxLineBytes)
	for left > 0 {
		if err := ctx.Err(); err != nil {
			return left, err
		}
		ln, err := lr.Next()
		if err == io.EOF {
			return left, nil
		}
		if err != nil {
			return left, err
		}
		if ln.TooLong || len(ln.Text) == 0 {
			continue
		}
		j, err := eventsOf(ln.Text)
		if err != nil {
			continue // reported in the first pass, never tracked
		}
		for text, ev := range j.Events(ln.Text) {
			f := firsts[seqKey{ev.SessionID, ev.Seq}]
			if f == nil || f.found {
				continue
			}
			*f = firstLine{found: true, hash: maphash.Bytes(seed, text), eventID: ev.EventID, at: location{file, ln.Num}}
			left--
		}
	}
	return left, nil
}

// reopen returns input name from its start, and a func to release it.
func (v *verifier) reopen(name string) (io.Reader, func(), error) {
	if name == stdinName {
		if v.stdin == nil {
			return nil, nil, errors.New("stdin was not kept")
		}
		if _, err := v.stdin.Seek(0, io.SeekStart); err != nil {
			return nil, nil, err
		}
		return v.stdin, func() {}, nil
	}
	if v.compressed[name] {
		r, err := integrity.TrailPart{Path: name, Compressed: true}.Open()
		if err != nil {
			return nil, nil, err
		}
		return r, func() { _ = r.Close() }, nil // read-only
	}
	f, err := openRegular(name)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { _ = f.Close() }, nil // read-only
}

// stdinName is how problems on stdin are located.
const stdinName = "<stdin>"

// spoolStdin copies stdin to an unlinked temporary file as the first pass
// reads it, so the second look can read it again; memory stays flat.
func (v *verifier) spoolStdin(stdin io.Reader) (io.Reader, error) {
	if v.stdin != nil {
		return stdin, nil // "-" twice: stdin is read to its end already
	}
	f, err := os.CreateTemp("", "sandboxaudit-verify-*")
	if err != nil {
		return nil, fmt.Errorf("keep a copy of stdin: %w", err)
	}
	_ = os.Remove(f.Name()) // unlinked: gone when closed, whatever happens
	v.stdin = f
	return io.TeeReader(stdin, f), nil
}

func (v *verifier) dropStdinSpool() {
	if v.stdin != nil {
		_ = v.stdin.Close()
		v.stdin = nil
	}
}
