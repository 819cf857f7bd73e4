package cli

import (
	"fmt"

	"golang.org/x/mod/sumdb/note"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
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
}

// useHandoverKey makes the key a handover named for the origin of the
// file's checkpoints the key to check it with; the returned func restores
// the key before it.
func (v *verifier) useHandoverKey(name string) func() {
	k, ok := v.handovers.next[integrity.FirstOrigin(name)]
	if !ok {
		return func() {}
	}
	before := v.opts.key
	v.opts.key = k
	return func() { v.opts.key = before }
}

// checkHandover reports a retired log that went on after its final
// checkpoint, and records the handover the file's log makes.
func (v *verifier) checkHandover(name string, lines int64) {
	st, err := integrity.ReadHandover(name, v.opts.key)
	if err != nil {
		v.sum.Problems++
		_, _ = fmt.Fprintf(v.out, "%s: handover: %v\n", integrity.CheckpointsPath(name), err)
		return
	}
	if from, ok := v.handovers.retired[st.Origin]; ok && st.Origin != "" {
		v.sum.Problems++
		_, _ = fmt.Fprintf(v.out, "%s: handover: this file goes on with the log %q, which %s retired with its final checkpoint\n",
			name, st.Origin, from)
		return
	}
	h := st.Final
	if h == nil {
		return
	}
	if st.After > 0 {
		v.sum.Problems++
		_, _ = fmt.Fprintf(v.out, "%s: handover: %d checkpoints were signed after the final one: the retired log went on\n",
			integrity.CheckpointsPath(name), st.After)
	}
	if lines > h.N {
		v.sum.Problems++
		_, _ = fmt.Fprintf(v.out, "%s:%d: handover: the log was retired at %d lines by its final checkpoint, but the file has %d: "+
			"lines were added after the handover\n", name, h.N+1, h.N, lines)
	}
	next, err := note.NewVerifier(h.NextKey)
	if err != nil {
		v.sum.Problems++
		_, _ = fmt.Fprintf(v.out, "%s: handover: next key: %v\n", integrity.CheckpointsPath(name), err)
		return
	}
	if v.handovers.next == nil {
		v.handovers.next, v.handovers.retired = map[string]note.Verifier{}, map[string]string{}
	}
	v.handovers.next[h.NextOrigin] = next
	v.handovers.retired[h.Origin] = name
	_, _ = fmt.Fprintf(v.out, "%s: handover: final at %d lines; the log goes on as %q, signed by %s+%08x\n",
		name, h.N, h.NextOrigin, next.Name(), next.KeyHash())
}
