package cli

import (
	"fmt"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/internal/witness"
)

// handovers is what verify learned of key handovers so far: files are
// checked in the order given, a retired log before the log it hands over
// to.
type handovers struct {
	// next maps the origin a handover names to the key it names.
	next map[string]note.Verifier
	// retired maps a retired log's origin to the file its final
	// checkpoint is in.
	retired map[string]string
	// genesis maps the origin a handover names to the leaf the new log
	// must start from (the record hash of the handover note), and from
	// to the retired file it came from.
	genesis map[string]tlog.Hash
	from    map[string]string
	// started maps the origin a handover names to the file whose log was
	// found to start from it: a second one is a fork of the chain.
	started map[string]string
	// forked maps the origin a handover names to the retired file whose
	// final checkpoint names it, for a handover the chain refused
	// (keyChain.forks): that log is not checked with its key.
	forked map[string]string
	// origins maps each origin read to the first file whose log has it:
	// a retired log read after another file of its origin is refused too.
	origins map[string]string
	// witnessFrom finds, per --witness key (by index), a handover note
	// that key signed: one for the run, which lists each directory once
	// per key, not once per segment read.
	witnessFrom []*integrity.HandedOverCheck
	// witnessChecked marks the logs whose handover notes the --witness
	// keys were checked against: --alone reads a log segment by segment,
	// and a key it refuses is one problem of the log.
	witnessChecked map[string]bool
	// genesisNoted marks the logs --alone said start from a handover
	// note it does not follow: once per log, not once per segment read.
	genesisNoted map[string]bool
	// followNoted marks the logs --alone said it follows across their
	// handover note: said once per log, not per segment.
	followNoted map[string]bool
}

func newHandovers() handovers {
	return handovers{next: map[string]note.Verifier{}, retired: map[string]string{}, genesis: map[string]tlog.Hash{},
		from: map[string]string{}, started: map[string]string{}, origins: map[string]string{}, forked: map[string]string{},
		witnessChecked: map[string]bool{}, genesisNoted: map[string]bool{}, followNoted: map[string]bool{}}
}

// followHandover makes the key a handover named for the origin of the
// file's checkpoints the key to check it with. The returned func checks
// that the file's log starts from that handover note, then restores the
// key before it.
func (v *verifier) followHandover(name string) func() {
	first := integrity.FirstSigned(name)
	origin := integrity.RecordOrigin(first)
	k, ok := v.handovers.next[origin]
	if _, forked := v.handovers.forked[origin]; forked {
		return func() {} // checked with --key: its handover's key is not trusted (reportForks)
	}
	if !ok {
		restore, ok := v.followChain(name, origin, first)
		if !ok {
			return func() { v.noteUnfollowed(name) }
		}
		return func() {
			v.noteUnfollowed(name)
			restore()
		}
	}
	before := v.opts.key
	v.opts.key = k
	return func() {
		v.checkGenesis(name, origin)
		v.opts.key = before
	}
}

// noteUnfollowed says, of a log whose leaf 0 is a handover note that no
// retired log read named, that the note was not checked, and how to
// check it: not a problem by itself (the new key may be the one given),
// but the link to the history before the log is not proven.
func (v *verifier) noteUnfollowed(name string) {
	if !integrity.StartsFromHandover(name) {
		return
	}
	_, _ = fmt.Fprintf(v.out, "%s: handover: the log starts from a handover note that no retired log read names, so its link to "+
		"the history before it is not checked: give the retired log too (or the directory that holds it), with the first key\n", name)
	v.refuseRetiredKeyAsWitness(name)
}

// refuseRetiredKeyAsWitness reports a --witness key that signed a
// handover note beside the log at name, or beside a log retired there: a
// key the log was handed over from. Read from the first key on, every key
// of the chain is --key or a next key, refused as such; read from a later
// key, the keys before it are known only by the notes they signed. It
// reports once per log, however many of its segments are read.
func (v *verifier) refuseRetiredKeyAsWitness(name string) {
	if v.handovers.witnessChecked[name] {
		return
	}
	v.handovers.witnessChecked[name] = true
	for i, c := range v.witnessFrom() {
		if _, from := c.From(name); from != "" {
			v.sum.Problems++
			_, _ = fmt.Fprintf(v.out, "%s: handover: --witness %s holds a key the log was handed over from (it signed %s): "+
				"a witness cosigns with a key of its own\n", name, v.opts.witness.files[i], from)
		}
	}
}

// witnessFrom is handovers.witnessFrom, built at its first use.
func (v *verifier) witnessFrom() []*integrity.HandedOverCheck {
	if v.handovers.witnessFrom == nil {
		for _, wv := range v.opts.witness.verifiers {
			var key []string
			if k, ok := wv.(fmt.Stringer); ok {
				key = append(key, k.String())
			}
			v.handovers.witnessFrom = append(v.handovers.witnessFrom, integrity.NewHandedOverCheck(key...))
		}
	}
	return v.handovers.witnessFrom
}

// checkGenesis refuses a log that a handover names but whose leaf 0 is
// not that handover's note: a log started without the note, or from
// another one.
func (v *verifier) checkGenesis(name, origin string) {
	want, from := v.handovers.genesis[origin], v.handovers.from[origin]
	sl, err := integrity.LoadSegmentLog(name, v.opts.key)
	why := genesisProblem(sl, err, origin, want)
	switch {
	case why != "":
		v.sum.Problems++
		_, _ = fmt.Fprintf(v.out, "%s: handover: the log at %s does not start from the handover of %s: %s\n", name, name, from, why)
	case v.handovers.started[origin] != "":
		v.sum.Problems++
		_, _ = fmt.Fprintf(v.out, "%s: handover: a second log starts from the handover of %s (the first is %s): "+
			"one handover starts one log\n", name, from, v.handovers.started[origin])
	default:
		v.handovers.started[origin] = name
		_, _ = fmt.Fprintf(v.out, "%s: handover: the log starts from the handover of %s\n", name, from)
	}
}

// genesisProblem says why the log whose segment records are sl (err: why
// they did not load) does not start from the handover note whose leaf is
// want and that names the log origin; "" when it does.
func genesisProblem(sl *integrity.SegmentLog, err error, origin string, want tlog.Hash) string {
	switch g := sl.Genesis(); {
	case err != nil:
		return err.Error()
	case g == nil:
		return "its first leaf is its first line, not the handover note"
	case g.Origin != origin:
		return fmt.Sprintf("its handover record names the log \"%s\"", g.Origin)
	case g.EndRange[0] != want:
		return "its first leaf is the hash of another note"
	}
	return ""
}

// checkHandover reports a retired log that went on after its final
// checkpoint, and records the handover the file's log makes. leaves is
// the size of the file's tree; lead is 1 when its leaf 0 is a handover
// note, not a line.
func (v *verifier) checkHandover(name string, leaves, lead int64) {
	st, ok := v.readHandover(name)
	if !ok {
		return
	}
	if from, ok := v.handovers.retired[st.Origin]; ok && st.Origin != "" {
		v.reportGoesOn(name, st.Origin, from)
		return
	}
	h := v.finalCheckpoint(name, st)
	switch first, seen := v.handovers.origins[st.Origin]; {
	case st.Origin == "":
	case !seen:
		v.handovers.origins[st.Origin] = name
	case h != nil && first != name:
		v.reportGoesOn(first, st.Origin, name) // read first, as its name sorts first
	}
	if h == nil {
		return
	}
	if leaves > h.N {
		v.sum.Problems++
		_, _ = fmt.Fprintf(v.out, "%s:%d: handover: the log was retired at %s by its final checkpoint, but the file has %d: "+
			"lines were added after the handover\n", name, h.N-lead+1, plural.Count(h.N-lead, "line"), leaves-lead)
	}
	next, ok := v.nextKey(name, h)
	if !ok {
		return
	}
	v.handovers.retired[h.Origin] = name
	if first := v.opts.chain.forkOf(v.opts.key, next); first != "" {
		v.handovers.forked[h.NextOrigin] = name
		_, _ = fmt.Fprintln(v.out, finalHandoverMsg(name, h.N-lead, h.NextOrigin, integrity.KeyID(next.Name(), next.KeyHash()), first))
		return
	}
	v.handovers.next[h.NextOrigin] = next
	v.openGiven(h.NextOrigin, next)
	v.handovers.genesis[h.NextOrigin] = integrity.GenesisLeaf(st.Signed)
	v.handovers.from[h.NextOrigin] = name
	_, _ = fmt.Fprintln(v.out, finalHandoverMsg(name, h.N-lead, h.NextOrigin, integrity.KeyID(next.Name(), next.KeyHash()), ""))
}

// finalHandoverMsg words the final checkpoint of the log at name, at
// lines lines, that hands it over to the log next signed by key; first,
// when not "", is the key the signer handed over to before, and key is
// not trusted.
func finalHandoverMsg(name string, lines int64, next, key, first string) string {
	msg := fmt.Sprintf("%s: handover: final at %s; the log goes on as \"%s\", signed by %s", name, plural.Count(lines, "line"), next, key)
	if first != "" {
		msg += ", not trusted: the key that signed this handover handed over to " + first + " first"
	}
	return msg
}

// reportGoesOn reports the file name whose log goes on with the origin
// that the file from retired.
func (v *verifier) reportGoesOn(name, origin, from string) {
	v.sum.Problems++
	_, _ = fmt.Fprintf(v.out, "%s: handover: this file goes on with the log \"%s\", which %s retired with its final checkpoint\n",
		name, origin, from)
}

// handoverOrder puts each retired log before the log its final checkpoint
// hands over to, wherever either was named or found, and keeps the order
// given otherwise. The links are read from the checkpoints unverified: the
// order only decides which key checks a log, and every signature is still
// checked when the log is read. chain, when not nil, learns the keys the
// handover notes read on the way name.
func handoverOrder(paths []string, chain *keyChain) []string {
	origin := make([]string, len(paths))
	next := make([]string, len(paths))
	first := map[string]int{} // origin -> the first path whose log has it
	for i, p := range paths {
		if p == "-" {
			continue // stdin: no log beside it
		}
		links := integrity.ReadHandoverLinks(p)
		origin[i], next[i] = links.Origin, links.Next
		if chain != nil {
			chain.learn(i, links.Notes)
		}
		if _, dup := first[origin[i]]; origin[i] != "" && !dup {
			first[origin[i]] = i
		}
	}
	// before[j] is the path whose handover names j's log.
	before := make([]int, len(paths))
	for j := range before {
		before[j] = -1
	}
	for i, nx := range next {
		if j, ok := first[nx]; ok && nx != "" && j != i && before[j] < 0 {
			before[j] = i
		}
	}
	if chain != nil {
		chain.settle(paths)
	}
	out := make([]string, 0, len(paths))
	done := make([]bool, len(paths))
	var emit func(i int)
	emit = func(i int) {
		if done[i] {
			return
		}
		done[i] = true // a cycle stops here
		if b := before[i]; b >= 0 {
			emit(b)
		}
		out = append(out, paths[i])
	}
	for i := range paths {
		emit(i)
	}
	return out
}

// readHandover reads the handover state of the log at name, reporting a
// sidecar that cannot be read as a problem.
func (v *verifier) readHandover(name string) (integrity.HandoverState, bool) {
	st, err := integrity.ReadHandover(name, v.opts.key)
	if err != nil {
		v.sum.Problems++
		_, _ = fmt.Fprintf(v.out, "%s: handover: %v\n", integrity.CheckpointsPath(name), err)
		return st, false
	}
	return st, true
}

// finalCheckpoint returns the log's final checkpoint, nil when it has none,
// and reports checkpoints signed after it: a retired log that went on.
func (v *verifier) finalCheckpoint(name string, st integrity.HandoverState) *integrity.Handover {
	if st.Final != nil && st.After > 0 {
		v.sum.Problems++
		_, _ = fmt.Fprintf(v.out, "%s: handover: %s %s signed after the final one: the retired log went on\n",
			integrity.CheckpointsPath(name), plural.Count(st.After, "checkpoint"), plural.Pick(st.After, "was", "were"))
	}
	return st.Final
}

// nextKey parses the key the final checkpoint h of the log at name hands
// over to, reporting one that does not parse as a problem.
func (v *verifier) nextKey(name string, h *integrity.Handover) (note.Verifier, bool) {
	next, err := note.NewVerifier(h.NextKey)
	if err != nil {
		v.sum.Problems++
		_, _ = fmt.Fprintf(v.out, "%s: handover: next key: %v\n", integrity.CheckpointsPath(name), err)
		return nil, false
	}
	v.refuseNextKeyAsWitness(name, h.NextKey)
	return next, true
}

// refuseNextKeyAsWitness reports a --witness key that is the key the log
// at name is handed over to (nextKey): that key's holder signs the next
// log, and could cosign what it rewrote there, as --key's could.
func (v *verifier) refuseNextKeyAsWitness(name, nextKey string) {
	for i, wv := range v.opts.witness.verifiers {
		if key, ok := wv.(fmt.Stringer); ok && witness.SameKey(key.String(), nextKey) {
			v.sum.Problems++
			_, _ = fmt.Fprintf(v.out, "%s: handover: --witness %s holds the key the log is handed over to (%s): "+
				"a witness cosigns with a key of its own\n", name, v.opts.witness.files[i], nextKey)
		}
	}
}
