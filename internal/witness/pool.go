package witness

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// maxConflicts bounds the 409 answers followed for one checkpoint: a
// witness that names a new size every time is refusing.
const maxConflicts = 3

// maxLogged bounds the errors remembered to log each cause once, and the
// sizes remembered per origin.
const maxLogged = 4096

// downFor is the shortest pause of a witness that could not be reached:
// a round over many files does not wait for its timeout once per file.
const downFor = 5 * time.Second

// MaxBackoff is the longest pause of a witness that keeps failing: it is
// asked again at least this often, so a cosignature comes soon after it
// is back.
const MaxBackoff = 10 * time.Minute

// Backoff is how long a witness that failed is not asked again: First
// after a failure, twice as long after each next one, up to Limit; a
// cosignature ends it. A witness that refuses one log (403, 404, 422, a
// 409 it keeps answering) pauses for that log; one that fails itself (no
// answer, 5xx, a bad cosignature) pauses for every log.
type Backoff struct {
	First, Limit time.Duration
	// Round is how often the witness is asked (the checkpoint interval):
	// a pause ends half a round early, so that the round due when it
	// ends asks the witness, not the one after. A request fails some
	// time into its round, which a pause counted from then would add
	// (up to half a round is taken off; a later failure skips a round).
	Round time.Duration
	// Now stands for time.Now when set: a test moves the clock.
	Now func() time.Time
}

// Prover returns the consistency proof from the tree of size old to the
// checkpoint being submitted.
type Prover func(old int64) (tlog.TreeProof, error)

// Observer counts what the witnesses answered.
type Observer interface {
	// Cosigned counts a cosignature received from witness.
	Cosigned(ctx context.Context, witness string)
	// Failed counts a witness that refused or could not be reached;
	// reason is Reason(err).
	Failed(ctx context.Context, witness, reason string)
}

// Pool submits each checkpoint to every witness, and remembers per
// witness and origin the size that witness last cosigned.
type Pool struct {
	witnesses []*Witness
	quorum    int
	logger    *zap.Logger
	observer  Observer

	mu sync.Mutex
	// known is, per witness and origin, the checkpoint that witness last
	// cosigned.
	known map[knownKey]cosigned
	// down is, per witness that failed itself, the error logged: logged
	// once for every log (and counted every time), and again once it has
	// cosigned.
	down map[int]string
	// refused is, per witness and origin it refuses, the cause the
	// refusal is summed up under; causes sums up the logs each witness
	// refuses for each cause (refusals.go).
	refused map[knownKey]refusalKey
	causes  map[refusalKey]*refusals
	// swept is when summariesDue last walked causes: a log refused as
	// forked keeps a cause of its own, so the walk can be maxLogged long
	// and is taken at most once per sweepEvery, not after every Cosign.
	swept   time.Time
	backoff Backoff
	// paused is, per witness and origin that failed (origin "": the
	// witness for every origin), until when it is not asked again.
	paused map[knownKey]pause
}

// cosigned is a checkpoint a witness cosigned: its size, the signed
// note's digest and the cosignature line. A checkpoint short of the
// quorum is submitted every round; a witness that cosigned it is not
// asked again, so one witness down does not cost the others a request per
// waiting file and round.
type cosigned struct {
	n    int64
	note [sha256.Size]byte
	line []byte
}

// pause is a witness's (or a witness's for one log) after a failure.
type pause struct {
	until time.Time
	last  time.Duration // the next failure pauses twice as long
	err   error         // what a checkpoint not submitted meanwhile fails with
}

type knownKey struct {
	witness int
	origin  string
}

// NewPool returns a pool; quorum is how many cosignatures a checkpoint
// needs to count as witnessed.
func NewPool(witnesses []*Witness, quorum int, logger *zap.Logger, observer Observer) (*Pool, error) {
	if quorum < 1 || quorum > len(witnesses) {
		return nil, fmt.Errorf("witness_quorum: must be between 1 and the %d witnesses, got %d", len(witnesses), quorum)
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	return &Pool{witnesses: witnesses, quorum: quorum, logger: logger, observer: observer, known: map[knownKey]cosigned{},
		down: map[int]string{}, refused: map[knownKey]refusalKey{}, causes: map[refusalKey]*refusals{},
		backoff: Backoff{First: downFor, Limit: MaxBackoff}, paused: map[knownKey]pause{}}, nil
}

// SetBackoff sets how long a witness that failed is not asked again (by
// default from 5 s up to MaxBackoff). Call it before the first Cosign.
func (p *Pool) SetBackoff(b Backoff) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backoff = b
}

// settings is the backoff, read under the lock SetBackoff writes it with.
func (p *Pool) settings() Backoff {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.backoff
}

// now is b.Now(), or time.Now() when Now is unset.
func (b Backoff) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// Quorum is the number of cosignatures a checkpoint needs.
func (p *Pool) Quorum() int { return p.quorum }

// Verifiers are the witnesses' cosignature verifiers.
func (p *Pool) Verifiers() []note.Verifier {
	vs := make([]note.Verifier, len(p.witnesses))
	for i, w := range p.witnesses {
		vs[i] = w.verifier
	}
	return vs
}

// Cosign submits the checkpoint (origin, size n, signed note) to every
// witness at once and returns the cosignature lines received. Each
// witness that refuses or cannot be reached is counted and paused
// (SetBackoff); one paused is not asked, and counted with the failure that
// paused it. Each cause is logged at ERROR (naming path): a witness's own
// failure once for every log; a refusal of one log at once for the first
// log of its cause, the next logs of that cause summed up (refusals.go).
// One that cosigned this checkpoint last is not asked again: its line is
// returned as received.
// quorum reports whether enough witnesses cosigned.
func (p *Pool) Cosign(ctx context.Context, path, origin string, n int64, signed []byte, prove func(old int64) (tlog.TreeProof, error)) (cosigs [][]byte, quorum bool) {
	lines := make([][]byte, len(p.witnesses))
	var wg sync.WaitGroup
	for i, w := range p.witnesses {
		if line := p.cosignedAlready(knownKey{witness: i, origin: origin}, n, signed); line != nil {
			lines[i] = line
			continue
		}
		wg.Go(func() {
			line, err := p.submit(ctx, i, origin, n, signed, prove)
			logEntries(p.logger, p.record(i, w.Name, path, origin, n, err))
			if err != nil {
				if p.observer != nil {
					p.observer.Failed(ctx, w.Name, Reason(err))
				}
				return
			}
			if p.observer != nil {
				p.observer.Cosigned(ctx, w.Name)
			}
			lines[i] = line
		})
	}
	wg.Wait()
	logEntries(p.logger, p.summariesDue())
	for _, l := range lines {
		if l != nil {
			cosigs = append(cosigs, l)
		}
	}
	return cosigs, len(cosigs) >= p.quorum
}

// submit runs add-checkpoint with one witness, unless it is paused, and
// pauses it when it fails.
func (p *Pool) submit(ctx context.Context, i int, origin string, n int64, signed []byte, prove Prover) ([]byte, error) {
	key := knownKey{witness: i, origin: origin}
	old, err := p.knownSize(key)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		// The round ran out of its time (or stops) before this request:
		// that says nothing about the witness, which is not paused.
		return nil, fmt.Errorf("not submitted: %w (the checkpoint is submitted again)", err)
	}
	line, err := p.add(ctx, i, old, n, signed, prove)
	switch {
	case err == nil:
		p.markCosigned(key, n, signed, line)
		return line, nil
	case errors.Is(ctx.Err(), context.Canceled):
		// Cancelled by us (the collector is stopping), which says
		// nothing about the witness: it is not paused.
		return nil, fmt.Errorf("%w (the checkpoint is submitted again)", err)
	}
	return nil, p.pause(key, err)
}

// add runs add-checkpoint from the size old, following the witness's 409
// answers.
func (p *Pool) add(ctx context.Context, i int, old, n int64, signed []byte, prove Prover) ([]byte, error) {
	for range maxConflicts + 1 {
		proof, err := proofFrom(old, n, prove)
		if err != nil {
			return nil, err
		}
		line, err := p.witnesses[i].AddCheckpoint(ctx, old, proof, signed)
		var ce *ConflictError
		if errors.As(err, &ce) {
			if ce.Size == old {
				return nil, fmt.Errorf("the witness holds another tree of size %d than this log's: history rewritten or forked (%w)", old, err)
			}
			old = ce.Size
			continue
		}
		return line, err
	}
	return nil, fmt.Errorf("%w: %d in a row", errConflicts, maxConflicts+1)
}

// knownSize is the tree size the witness of key last cosigned for its
// origin (0: not known), or the error that paused that witness, for its
// origin or for all, while the pause lasts.
func (p *Pool) knownSize(key knownKey) (int64, error) {
	b := p.settings()
	now := b.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range []knownKey{{witness: key.witness}, key} {
		if pz, ok := p.paused[k]; ok && now.Before(pz.until.Add(-b.Round/2)) {
			return 0, pz.err
		}
	}
	return p.known[key].n, nil
}

// cosignedAlready returns the cosignature line of the witness of key for
// the checkpoint (size n, signed note) when it cosigned that checkpoint
// last, else nil.
func (p *Pool) cosignedAlready(key knownKey, n int64, signed []byte) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.known[key]
	if !ok || c.n != n || c.note != sha256.Sum256(signed) {
		return nil
	}
	return c.line
}

// proofFrom proves the log of n lines extends the witness's tree of old
// lines (none is needed from an empty or the same tree).
func proofFrom(old, n int64, prove Prover) (tlog.TreeProof, error) {
	if old > n {
		// n is not in the message (the log names the size): a log that
		// grows back toward old is refused the same way, logged once.
		return nil, fmt.Errorf("the witness cosigned a tree of %d lines, more than this checkpoint's: "+
			"the log was cut back, or another log signs with this origin and key (%w)", old, &ConflictError{Size: old})
	}
	if old <= 0 || old == n {
		return nil, nil
	}
	proof, err := prove(old)
	if err != nil {
		return nil, fmt.Errorf("%w from size %d: %w", errNoProof, old, err)
	}
	return proof, nil
}

// pause keeps key's witness from being asked again, for key's origin or
// for every one (failsItself), for the backoff's next pause, and returns
// err saying so. The text is the same for every pause of one kind: a
// cause is logged once, not once per doubling.
func (p *Pool) pause(key knownKey, err error) error {
	b := p.settings()
	first := b.First
	if Reason(err) == "unreachable" {
		first = max(first, downFor)
	}
	if first <= 0 {
		return err
	}
	limit := max(b.Limit, first)
	if first == limit {
		err = fmt.Errorf("%w (not asked again for %s)", err, first)
	} else {
		err = fmt.Errorf("%w (not asked again for %s, twice as long after each next failure, up to %s)", err, first, limit)
	}
	if failsItself(err) {
		key.origin = ""
	}
	now := b.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	d := first
	if prev, ok := p.paused[key]; ok {
		d = min(max(prev.last*2, first), limit)
	}
	if len(p.paused) >= maxLogged {
		clear(p.paused) // each pause starts again from the first
	}
	p.paused[key] = pause{until: now.Add(d), last: d, err: err}
	return err
}

// failsItself reports whether err says the witness fails whatever the log
// (no answer, a server error, a bad cosignature), not that it refuses
// this log.
func failsItself(err error) bool {
	var re *RefusedError
	if errors.As(err, &re) {
		return re.Status >= http.StatusInternalServerError
	}
	switch Reason(err) {
	case "unreachable", "bad_cosignature", "dated_ahead":
		return true
	}
	return false
}

// markCosigned remembers that key's witness cosigned the checkpoint
// signed, a tree of n lines, with line, and ends its pauses.
func (p *Pool) markCosigned(key knownKey, n int64, signed, line []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.known) >= maxLogged {
		clear(p.known) // each origin learns its size again from a 409
	}
	p.known[key] = cosigned{n: n, note: sha256.Sum256(signed), line: line}
	delete(p.paused, key)
	delete(p.paused, knownKey{witness: key.witness})
}

// Count returns how many of the pool's witnesses validly cosigned the
// signed note (a checkpoint with its cosignature lines).
func (p *Pool) Count(signed []byte) int {
	return CountCosignatures(signed, p.Verifiers())
}

// CountCosignatures returns how many of the verifiers validly signed msg,
// a note; a note none of them signed counts 0, and a cosignature dated
// more than MaxClockSkew after the clock does not count.
func CountCosignatures(msg []byte, verifiers []note.Verifier) int {
	n, err := note.Open(msg, note.VerifierList(verifiers...))
	if err != nil {
		return 0
	}
	// A key is its name and hash; one key signing twice counts once.
	type keyID struct {
		name string
		hash uint32
	}
	seen := map[keyID]bool{}
	now := time.Now()
	for _, s := range n.Sigs {
		if !DatedAhead(s, now) {
			seen[keyID{s.Name, s.Hash}] = true
		}
	}
	return len(seen)
}
