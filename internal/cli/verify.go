package cli

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/google/uuid"
	"golang.org/x/mod/sumdb/note"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/lines"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/internal/seqset"
	"github.com/sandboxaudit/sandboxaudit/internal/tornjoin"
)

// runVerify checks audit files and exits non-zero when it finds problems.
func runVerify(ctx context.Context, args []string, s Streams) int {
	fs, f := newVerifyFlags(s.Stderr)
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return flagStatus(err)
	}
	// Every line from here names files, and many quote what they hold.
	s = s.shown()
	if err := f.witness.load(f.keyFile); err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "verify: %v\n", err)
		return exitUsage
	}
	if len(files) == 0 {
		fs.Usage()
		return exitUsage
	}
	files = dropSidecars(files, s.Stderr)
	opts, code := f.options(files, s.Stderr)
	if code != exitOK {
		return code
	}
	if opts.key != nil && !f.alone {
		opts.chain = newKeyChain(opts.key)
	}
	files, listing, code := verifyFiles(files, f.alone, opts.key != nil, opts.chain, s.Stderr)
	if code != exitOK {
		return code
	}
	return verifyAndReport(ctx, files, f.alone, listing, opts, s)
}

// verifyFlags are verify's command-line flags, as parsed.
type verifyFlags struct {
	allowOpen, allowDups, allowRenamed bool
	requireContiguous                  bool
	keyFile                            string
	unsealed                           unsealedLimit
	alone                              bool
	given                              listFlag
	strict                             bool
	witness                            witnessFlags
}

// newVerifyFlags registers verify's flags on a new flag set.
func newVerifyFlags(stderr io.Writer) (*flag.FlagSet, *verifyFlags) {
	f := &verifyFlags{}
	fs := newFlagSet("verify", "verify [--allow-open] [--allow-duplicates] [--require-contiguous] [--key NAME.pub [--allow-renamed] [--allow-unsealed COUNT|DURATION] [--strict] [--alone] [--checkpoint FILE]... "+
		"[--witness W.vkey]... [--quorum K] [--allow-unwitnessed N]] FILE|DIR... (\"-\" reads stdin)", stderr)
	fs.BoolVar(&f.allowOpen, "allow-open", false, "accept start events without a finish (operations still running, or a file still being written)")
	fs.BoolVar(&f.allowDups, "allow-duplicates", false,
		"accept exact copies of an earlier line (same session, seq and event_id, same bytes), which at-least-once delivery can write")
	fs.BoolVar(&f.requireContiguous, "require-contiguous", false,
		"count seqs missing from a session (from 1 to its highest seq read) as problems, not warnings: "+
			"for a trail whose every file is given and whose producers never fail an event closed")
	fs.StringVar(&f.keyFile, "key", "", "verifier key (sandboxaudit keygen's NAME.pub): also check every line against the file's signed checkpoints, "+
		"signed by it or by a key a handover it signed names, in turn")
	fs.BoolVar(&f.allowRenamed, "allow-renamed", false,
		"with --key, accept a file whose checkpoints name another file (renamed or moved with its sidecars) with a warning; "+
			"without it that fails, since it is also what a file swapped for another sealed with the same key looks like")
	fs.Var(&f.unsealed, "allow-unsealed",
		"with --key, accept lines after the newest checkpoint: up to COUNT lines, or lines in files written within DURATION "+
			"(a live file's last lines); without it any unsealed line is a problem, as a forged appended line reads the same")
	fs.BoolVar(&f.alone, "alone", false,
		"with --key, verify each closed segment named (or below a directory named) alone, without the rest of its trail: "+
			"its lines against its signed record, then a consistency proof from the hash store to the newest checkpoint spans the segments not read; "+
			"a segment of a log handed over from --key's is checked with the key its handover note names")
	fs.Var(&f.given, "checkpoint",
		"with --key, a signed checkpoint kept elsewhere (an auditor's copy, a witness's), repeatable: "+
			"also prove the log read extends it (its first N lines have its root), or, with --alone, each segment read is in it")
	fs.BoolVar(&f.strict, "strict", false,
		"with --key, count a hash store that is damaged or not used as a problem, not a warning: "+
			"the lines are checked without it, but --alone, prove and the collector's next start of a rotated log need it")
	f.witness.register(fs)
	return fs, f
}

// options loads the key and the given checkpoints, and refuses the flags
// that need --key without it. A status other than exitOK ends the run,
// its reason on stderr.
func (f *verifyFlags) options(files []string, stderr io.Writer) (verifyOptions, int) {
	opts := verifyOptions{allowOpen: f.allowOpen, allowDuplicates: f.allowDups, requireContiguous: f.requireContiguous, allowRenamed: f.allowRenamed, allowUnsealed: f.unsealed, witness: f.witness, strict: f.strict}
	if f.keyFile != "" {
		var err error
		if opts.key, err = integrity.LoadVerifierKey(f.keyFile); err != nil {
			_, _ = fmt.Fprintf(stderr, "verify: --key: %v\n", err)
			return opts, exitUsage
		}
		opts.givenFiles = f.given
		if opts.given, opts.givenOther, err = loadGivenCheckpoints(f.given, opts.key); err != nil {
			_, _ = fmt.Fprintf(stderr, "verify: --checkpoint: %v\n", err)
			return opts, exitUsage
		}
		if slices.Contains(files, "-") {
			_, _ = fmt.Fprintln(stderr, "verify: --key needs files, not stdin: the checkpoints are read from beside the file")
			return opts, exitUsage
		}
	}
	if len(f.given) > 0 && opts.key == nil {
		_, _ = fmt.Fprintln(stderr, "verify: --checkpoint needs --key: the checkpoint is checked against the log's key")
		return opts, exitUsage
	}
	if opts.key == nil && (f.strict || f.unsealed.set() || f.allowRenamed) {
		// Without --key nothing they loosen or tighten is checked: an OK
		// would read as if the integrity checks had passed.
		_, _ = fmt.Fprintln(stderr, "verify: --strict, --allow-unsealed and --allow-renamed need --key: they concern the integrity checks, which --key turns on")
		return opts, exitUsage
	}
	if f.alone && opts.key == nil {
		_, _ = fmt.Fprintln(stderr, "verify: --alone needs --key: a segment alone is checked against its signed record and checkpoints")
		return opts, exitUsage
	}
	return opts, exitOK
}

// verifyAndReport checks the files and prints the summary line and the
// verdict.
func verifyAndReport(ctx context.Context, files []string, alone bool, listing *trailListing, opts verifyOptions, s Streams) int {
	v := newVerifier(s.Stdout, opts)
	defer v.dropStdinSpool()
	v.reportForks()
	if err := v.verifyAll(ctx, files, alone, listing, s.Stdin); err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "verify: %v\n", err)
		return exitProblems
	}
	v.reportUnusedGiven()
	if err := v.settleRepeats(ctx); err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "verify: %v\n", err)
		return exitProblems
	}
	sum := v.finish()
	// duplicates= and missing= come last so the line still starts as it
	// did before the fields existed (scripts and tests match on that prefix).
	_, _ = fmt.Fprintf(s.Stdout, "files=%d lines=%d events=%d sessions=%d open=%d problems=%d duplicates=%d missing=%d\n",
		sum.Files, sum.Lines, sum.Events, sum.Sessions, sum.Open, sum.Problems, sum.Duplicates, sum.Missing)
	if sum.Problems > 0 {
		_, _ = fmt.Fprintln(s.Stdout, "FAILED")
		return exitProblems
	}
	_, _ = fmt.Fprintln(s.Stdout, "OK")
	return exitOK
}

// verifyFiles turns verify's arguments into the files to check, in
// order: with alone the closed segments, else the files and trails below
// the directories named. chain, when not nil, learns the keys the
// handover notes beside them name. A status other than exitOK ends the
// run, its reason on stderr.
func verifyFiles(args []string, alone, key bool, chain *keyChain, stderr io.Writer) ([]string, *trailListing, int) {
	if alone {
		files, err := aloneArgs(args)
		if err != nil || len(files) == 0 {
			_, _ = fmt.Fprintf(stderr, "verify: %v\n", cmp.Or(err, errors.New("--alone: no closed segment in the directories named")))
			if err != nil && !errors.Is(err, errNotAlone) {
				return nil, nil, exitProblems
			}
			return nil, nil, exitUsage
		}
		return handoverOrder(files, nil), &trailListing{}, exitOK
	}
	files, listing, err := expandArgs(args, key)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "verify: %v\n", err)
		return nil, nil, exitProblems
	}
	if key {
		files = handoverOrder(files, chain)
	}
	for _, p := range listing.torn {
		// Not a problem: the line was never acknowledged (docs/guarantees.md).
		_, _ = fmt.Fprintf(stderr, "verify: skipping %s, a torn last line a killed writer left, cut off and kept aside; never acknowledged, not part of the trail\n", p)
	}
	return files, listing, exitOK
}

// verifyAll checks each file: stdin ("-") and any other file by itself, a
// closed segment alone, a trail with segments as one log.
func (v *verifier) verifyAll(ctx context.Context, files []string, alone bool, listing *trailListing, stdin io.Reader) error {
	for _, name := range files {
		var err error
		switch {
		case name == "-":
			// stdin, never a path: nothing beside it is looked at.
			err = v.verifyPath(ctx, name, stdin)
		case alone:
			err = v.verifySegmentAlone(ctx, name)
		case v.opts.key != nil:
			err = v.verifyKeyed(ctx, name, listing, stdin)
		default:
			err = v.verifyPath(ctx, name, stdin)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// verifyKeyed checks name with --key: as one log with its closed
// segments (listed once) when it is a trail, else by itself.
func (v *verifier) verifyKeyed(ctx context.Context, name string, listing *trailListing, stdin io.Reader) error {
	segs, err := listing.segments(name)
	if !integrity.IsTrail(name, len(segs)) {
		return v.verifyPath(ctx, name, stdin)
	}
	if err != nil {
		return err
	}
	return v.verifyTrail(ctx, name, segs)
}

// summary is verify's result.
type summary struct {
	Files, Lines, Events, Sessions int
	// Open counts starts without a finish at the end (problems unless
	// allowed).
	Open int
	// Duplicates counts lines that are exact copies of an earlier line
	// (problems unless allowed).
	Duplicates int
	// Missing counts the seqs missing from the sessions (from 1 to each
	// one's highest): warnings, or one problem per session with
	// --require-contiguous.
	Missing  int64
	Problems int
}

// verifyOptions are verify's flags.
type verifyOptions struct {
	allowOpen       bool
	allowDuplicates bool
	// requireContiguous makes seqs missing from a session problems.
	requireContiguous bool
	// key, when set, adds the integrity checks (docs/tamper-evidence.md).
	key note.Verifier
	// allowRenamed makes checkpoints naming another file a warning.
	allowRenamed bool
	// allowUnsealed bounds the unsealed lines accepted.
	allowUnsealed unsealedLimit
	// strict makes a hash store damaged or not used a problem.
	strict bool
	// witness holds the witness keys and quorum (docs/witnesses.md).
	witness witnessFlags
	// given are --checkpoint's checkpoints, read from givenFiles: the log
	// of each must extend it (a segment alone must be in it).
	given      []integrity.Checkpoint
	givenFiles []string
	// givenOther are the given checkpoints, by place, that --key did not
	// sign: those of a log a handover started, opened when verify reads
	// the final checkpoint that names their key (openGiven).
	givenOther map[int]otherGiven
	// chain is the keys trusted from key on, by the handover notes read
	// (verify_chain.go); nil with --alone, which follows one note.
	chain *keyChain
}

// verifier checks a stream of audit lines, possibly spread over several
// files (rotated parts, one file per session). Its state is per session:
// the seqs used, as ranges (seqset.Set), and the spans whose other half has not
// been seen yet; so memory follows the sessions and the operations in
// flight, not the file length. Lines that reuse a seq wait in repeats.
type verifier struct {
	out      io.Writer
	opts     verifyOptions
	seed     maphash.Seed // one per run: line hashes are compared within it
	files    []string
	sessions map[uuid.UUID]*sessionState
	repeats  []repeat
	stdin    *os.File // stdin spooled for the second look (repeats.go)
	// handovers are the key handovers seen so far (verify_handover.go).
	handovers handovers
	// trailWitness is the witness check of the trail being verified, and
	// trailLog its segment records.
	trailWitness *integrity.WitnessCheck
	trailLog     *integrity.SegmentLog
	sum          summary
	buf          []byte
	// afterRetention marks the files (by index) that open a trail whose
	// older segments retention removed: a finish there may have lost its
	// start with them.
	afterRetention map[int]bool
	// alone marks the files (by index) of segments checked alone
	// (--alone): a span's other half may be in a segment not read.
	alone map[int]bool
	// givenUsed marks the --checkpoint checkpoints of a log verified.
	givenUsed map[int]bool
	// compressed marks the inputs read decompressed.
	compressed map[string]bool
	// listed counts the problems listed, by file (maxListedProblems).
	listed map[int]int
	// repeatOf finds the repeat a copy of a line waits with (repeats.go).
	repeatOf map[repeatSig]int
}

// maxListedProblems bounds the problems listed for one file: a compressed
// segment of 72 KB decompresses to two billion blank lines, each a
// problem, and would print as many. All are counted in problems=.
const maxListedProblems = 1000

type sessionState struct {
	seqs  seqset.Set
	spans map[string]*spanHalf
	first location // the session's first line read
}

// spanHalf is the event of a span seen so far; complete spans are dropped
// so memory follows the operations in flight, not the file length.
type spanHalf struct {
	phase auditevent.Phase
	op    string
	seq   int64
	at    location
}

type location struct {
	file int
	line int
}

func newVerifier(out io.Writer, opts verifyOptions) *verifier {
	return &verifier{out: out, opts: opts, seed: maphash.MakeSeed(), sessions: map[uuid.UUID]*sessionState{},
		afterRetention: map[int]bool{}, alone: map[int]bool{}, givenUsed: map[int]bool{}, compressed: map[string]bool{},
		listed: map[int]int{}, repeatOf: map[repeatSig]int{}, handovers: newHandovers()}
}

func (v *verifier) where(at location) string {
	return fmt.Sprintf("%s:%d", v.files[at.file], at.line)
}

func (v *verifier) problem(at location, format string, args ...any) {
	if v.listed[at.file] < maxListedProblems {
		_, _ = fmt.Fprintf(v.out, "%s: %s\n", v.where(at), fmt.Sprintf(format, args...))
	}
	v.unlisted(at.file, 1)
}

// unlisted counts n problems of file beyond those problem lists, and says
// once that the file has more than are listed.
func (v *verifier) unlisted(file, n int) {
	v.sum.Problems += n
	before := v.listed[file]
	v.listed[file] = before + n
	if before <= maxListedProblems && before+n > maxListedProblems {
		_, _ = fmt.Fprintf(v.out, "%s: more than %d problems: the others are counted in problems=, not listed\n",
			v.files[file], maxListedProblems)
	}
}

// verifyPath checks one file; "-" is stdin. An unreadable file is an error
// (the check cannot be done), not a problem in the data.
func (v *verifier) verifyPath(ctx context.Context, name string, stdin io.Reader) error {
	if name == "-" {
		r, err := v.spoolStdin(stdin)
		if err != nil {
			return err
		}
		return v.verifyReader(ctx, stdinName, r)
	}
	if strings.HasSuffix(name, filesink.ZstdSuffix) && v.opts.key == nil {
		return v.verifyParts(ctx, []integrity.TrailPart{{Path: name, Compressed: true}}, nil)
	}
	f, err := openRegular(name)
	if errors.Is(err, os.ErrNotExist) && v.opts.key != nil && hasLogSidecar(name) {
		// The file is gone, its signed history is not: every line the
		// checkpoints sign is missing (none, for a log of 0 lines whose
		// file is not made yet).
		_, _ = fmt.Fprintf(v.out, "%s: integrity: the audit file is missing, but its signed history is there: it is checked as an empty file\n", name)
		return v.verifySealed(ctx, name, strings.NewReader(""))
	}
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // read-only: a close error loses nothing
	if v.opts.key != nil {
		return v.verifySealed(ctx, name, f)
	}
	if err := v.verifyReader(ctx, name, f); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func (v *verifier) verifyReader(ctx context.Context, name string, r io.Reader) error {
	v.files = append(v.files, name)
	v.sum.Files++
	file := len(v.files) - 1
	lr := lines.NewReader(r, 64<<10, maxLineBytes)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		ln, err := lr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		v.sum.Lines++
		v.checkLine(location{file: file, line: ln.Num}, ln)
	}
}

func (v *verifier) checkLine(at location, ln lines.Line) {
	if ln.TooLong {
		v.problem(at, "line longer than %d bytes", maxLineBytes)
		return
	}
	if !ln.Newline {
		// The writer appends whole lines; a last line without its newline
		// is a torn write, even when the JSON happens to be complete.
		v.problem(at, "no newline at end of line (torn write?)")
	}
	if len(ln.Text) == 0 {
		v.problem(at, "blank line")
		return
	}
	j, err := eventsOf(ln.Text)
	if err != nil {
		v.problem(at, "%v", err)
		return
	}
	if j.Piece > 0 {
		v.joined(at, &j, ln.Text)
	}
	for text, ev := range j.Events(ln.Text) {
		v.checkEvent(at, text, ev)
	}
}

// checkEvent checks one event of the line at, text being its own line.
func (v *verifier) checkEvent(at location, text []byte, ev *auditevent.Event) {
	v.sum.Events++
	v.buf = auditevent.AppendJSON(v.buf[:0], ev)
	if !bytes.Equal(v.buf, text) {
		v.problem(at, "not canonical: %s", firstDifference(text, v.buf))
	}
	if ev.Version != 1 {
		v.problem(at, "version: %d, this tool knows version 1", ev.Version)
	}
	for _, p := range checkIDs(ev) {
		v.problem(at, "%s", p)
	}
	v.track(at, ev, text)
}

// eventsOf decodes a line: the event it is, or for a line that is not an
// event, the whole event line after a piece when it holds one
// (tornjoin.Find), with the piece's event when the piece is one. Each
// event is decoded once.
func eventsOf(line []byte) (tornjoin.Join, error) {
	ev, err := auditevent.Decode(line)
	if err == nil {
		return tornjoin.Join{Event: ev}, nil
	}
	if j, ok := tornjoin.Find(line); ok {
		return j, nil
	}
	return tornjoin.Join{}, err
}

// joined reports a line that is a piece followed by a whole event line.
// Every event in it is read and tracked, so its seq is not missing; the
// line is a problem, as is any torn piece left in a file (the collector's
// own, closed where it is): a file at rest holds whole lines, one event
// each, and with --key the line signed is the physical one, both writes
// and all. Pieces the collector cut off and kept aside are no part of the
// trail, and are not read. A piece that is the whole line's bytes (text
// is the line) is one event resent, its copy a duplicate (track).
func (v *verifier) joined(at location, j *tornjoin.Join, text []byte) {
	ev := &j.Event
	if j.Repeats(text) {
		v.problem(at, "an event line without its newline followed by the same event line whole (session %s, seq %d): "+
			"a writer killed before its newline, then the same event resent; it is one event, read twice", ev.SessionID, ev.Seq)
		return
	}
	if p := j.PieceEvent; p != nil {
		v.problem(at, "an event line without its newline (session %s, seq %d) followed by a whole event line (session %s, seq %d): "+
			"a writer killed before its newline, then another writer's line; both events are read",
			p.SessionID, p.Seq, ev.SessionID, ev.Seq)
		return
	}
	v.problem(at, "a torn piece of %s followed by a whole event line (session %s, seq %d): "+
		"a writer killed mid-line, then another writer's line; the event is read",
		plural.Count(j.Piece, "byte"), ev.SessionID, ev.Seq)
}

// track does the per-session checks: unique seqs, and start/finish pairs
// matched by span_id with the finish's seq above the start's. Lines may come
// in any order (spans end out of order, files may be given in any order).
// A line whose seq was used before is set aside until the pass is over (see
// repeats.go): only then can the first line with that seq be read again to
// tell an exact copy from a reuse.
func (v *verifier) track(at location, ev *auditevent.Event, line []byte) {
	ss := v.sessions[ev.SessionID]
	if ss == nil {
		ss = &sessionState{spans: map[string]*spanHalf{}, first: at}
		v.sessions[ev.SessionID] = ss
	}
	half := spanHalf{phase: ev.Phase, op: ev.Op, seq: ev.Seq, at: at}
	if ss.seqs.Add(ev.Seq) {
		v.addRepeat(repeat{
			session: ev.SessionID, spanID: ev.SpanID, half: half,
			eventID: ev.EventID, hash: maphash.Bytes(v.seed, line),
		})
		return
	}
	v.pair(ss, ev.SessionID, ev.SpanID, half)
}

// pair matches an event with the other half of its span.
func (v *verifier) pair(ss *sessionState, session uuid.UUID, spanID string, half spanHalf) {
	if spanID == "" {
		return // reported by checkIDs; cannot be paired
	}
	other := ss.spans[spanID]
	if other == nil {
		ss.spans[spanID] = &half
		return
	}
	at := half.at
	if other.phase == half.phase {
		v.problem(at, "second %s event for span_id \"%s\" in session %s (first at %s)",
			half.phase, spanID, session, v.whereFirst(other.at, at))
		return
	}
	delete(ss.spans, spanID)
	start, finish := other, &half
	if half.phase == auditevent.PhaseStart {
		start, finish = finish, other
	}
	if start.op != finish.op {
		v.problem(at, "span_id \"%s\": start op %q (at %s) but finish op %q (at %s)",
			spanID, start.op, v.where(start.at), finish.op, v.where(finish.at))
	}
	if finish.seq <= start.seq {
		v.problem(at, "span_id \"%s\": finish seq %d (at %s) not above start seq %d (at %s)",
			spanID, finish.seq, v.where(finish.at), start.seq, v.where(start.at))
	}
}

// finish reports the spans left unpaired and returns the summary. Output is
// ordered by position in the input so it is stable from run to run.
func (v *verifier) finish() summary {
	type unpaired struct {
		session uuid.UUID
		span    string
		half    *spanHalf
	}
	var left []unpaired
	for sid, ss := range v.sessions {
		for span, h := range ss.spans {
			left = append(left, unpaired{sid, span, h})
		}
	}
	slices.SortFunc(left, func(a, b unpaired) int {
		return cmp.Or(cmp.Compare(a.half.at.file, b.half.at.file), cmp.Compare(a.half.at.line, b.half.at.line))
	})
	for _, u := range left {
		if v.alone[u.half.at.file] {
			_, _ = fmt.Fprintf(v.out, "%s: note: %s without its other half: span_id \"%s\" in session %s; it may be in a segment not read (--alone)\n",
				v.where(u.half.at), u.half.phase, u.span, u.session)
			continue
		}
		if u.half.phase == auditevent.PhaseFinish && v.afterRetention[u.half.at.file] {
			_, _ = fmt.Fprintf(v.out, "%s: note: finish without a start: span_id \"%s\" in session %s; its start was in a segment retention removed\n",
				v.where(u.half.at), u.span, u.session)
			continue
		}
		if u.half.phase == auditevent.PhaseFinish {
			v.problem(u.half.at, "finish without a start: span_id \"%s\" in session %s", u.span, u.session)
			continue
		}
		v.sum.Open++
		if !v.opts.allowOpen {
			v.problem(u.half.at, "start without a finish: span_id \"%s\" (op %s, seq %d) in session %s (use --allow-open for a live file)",
				u.span, u.half.op, u.half.seq, u.session)
		}
	}
	v.reportGaps()
	v.sum.Sessions = len(v.sessions)
	return v.sum
}

// firstDifference describes where have (the line) departs from want (its
// canonical form), with a little context around that byte.
func firstDifference(have, want []byte) string {
	i := 0
	for i < len(have) && i < len(want) && have[i] == want[i] {
		i++
	}
	return fmt.Sprintf("first difference at byte %d: line has %s, canonical form has %s",
		i+1, excerpt(have, i), excerpt(want, i))
}

func excerpt(b []byte, i int) string {
	const before, after = 16, 24
	lo := max(i-before, 0)
	hi := min(i+after, len(b))
	// Quoted as it is: v.out shows whatever it holds as escapes.
	s := `"` + string(b[lo:hi]) + `"`
	if i >= len(b) {
		s += " (end of line)"
	}
	if lo > 0 {
		s = "…" + s
	}
	return s
}

// dropSidecars leaves out the integrity sidecars of files also named, as
// `verify audit/events.jsonl*` names them: they are not audit lines, and
// --key reads them from beside their file anyway.
func dropSidecars(files []string, stderr io.Writer) []string {
	named := make(map[string]bool, len(files))
	for _, f := range files {
		named[f] = true
	}
	suffixes := append(integrity.LogSidecarSuffixes(), integrity.OwnerLockSuffix)
	return slices.DeleteFunc(files, func(f string) bool {
		for _, suffix := range suffixes {
			if base, ok := strings.CutSuffix(f, suffix); ok && named[base] {
				_, _ = fmt.Fprintf(stderr, "verify: skipping %s, the integrity sidecar of %s\n", f, base)
				return true
			}
		}
		return false
	})
}
