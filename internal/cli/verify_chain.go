package cli

import (
	"fmt"
	"slices"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// keyChain is the keys verify trusts: --key, and each key that a handover
// note verified with a key already trusted names as its next key
// (FIRST -> K2 -> K3 ...). A templated path's session file made after a
// handover starts a log of the new key that no note names by origin: the
// chain lets verify --key FIRST check it (docs/witnesses.md, "The keys a
// handover names").
// It is learned before any log is read, from the handover notes only:
// the final checkpoints of the logs given and the PATH.handover notes
// beside them.
type keyChain struct {
	keys []chainKey // keys[0] is --key
	// pending are the paths (by place) whose notes no trusted key
	// verified yet: their notes are read again once the chain grows, and
	// never kept meanwhile.
	pending []int
	// witnessChecked marks the keys (by place) whose refusal as a
	// --witness was checked.
	witnessChecked map[int]bool
	// handedTo is, per trusted key (name+hash) that signed a handover
	// note, the first such note read: a key hands over to one key.
	handedTo map[string]namedKey
	// forks are the notes that hand a key over a second time, to
	// another key: the key they name is not trusted.
	forks []chainFork
}

// namedKey is the key a handover note names (name+hash) and its file.
type namedKey struct{ next, note string }

// chainFork is a handover note that a trusted key signed after (as read)
// one naming another key: what the holder of a retired key, leaked,
// would sign to have verify trust a key of its own.
type chainFork struct {
	signer string
	first  namedKey
	second namedKey
}

// chainKey is a trusted key and the handover note that named it.
type chainKey struct {
	v note.Verifier
	// note is the file of the note that named the key, and signer the
	// key that signed it (name+hash); both "" for --key.
	note, signer string
	// text is the key as the note names it (name+hash+base64).
	text string
}

func newKeyChain(first note.Verifier) *keyChain {
	return &keyChain{keys: []chainKey{{v: first}}, witnessChecked: map[int]bool{}, handedTo: map[string]namedKey{}}
}

// verifiers is the chain's keys, to open a note with.
func (c *keyChain) verifiers() note.Verifiers {
	vs := make([]note.Verifier, len(c.keys))
	for i, k := range c.keys {
		vs[i] = k.v
	}
	return note.VerifierList(vs...)
}

// learn takes the notes read beside paths[i]; the path waits to be read
// again when a note does not verify with a key trusted yet.
func (c *keyChain) learn(i int, notes []integrity.NoteFile) {
	if !c.offer(notes) {
		c.pending = append(c.pending, i)
	}
}

// settle reads the pending paths' notes again while the chain grows: a
// note signed by a key that a note read after it named. Each round reads
// only the paths still pending, so a note no trusted key signed costs a
// read per key learned, and nothing is kept of it.
func (c *keyChain) settle(paths []string) {
	for tried := 1; len(c.keys) > tried && len(c.pending) > 0; {
		tried = len(c.keys)
		c.pending = slices.DeleteFunc(c.pending, func(i int) bool {
			return c.offer(integrity.ReadHandoverLinks(paths[i]).Notes)
		})
	}
	c.pending = nil
}

// offer trusts the next key of each note that a trusted key signs, and
// reports whether every note was so signed.
func (c *keyChain) offer(notes []integrity.NoteFile) bool {
	all := true
	for _, nf := range notes {
		n, err := note.Open(nf.Signed, c.verifiers())
		if err != nil {
			all = false
			continue
		}
		h, final, err := integrity.ParseHandover([]byte(n.Text))
		if err != nil || !final {
			continue // a note it does not hand over; the log's check reports it
		}
		if next, err := note.NewVerifier(h.NextKey); err == nil {
			c.trust(nf.Path, integrity.KeyID(n.Sigs[0].Name, n.Sigs[0].Hash), next, h.NextKey)
		}
	}
	return all
}

// trust trusts next, named by the note at path that signer signed,
// unless signer named another key before: that note is a fork, the key
// it names is not trusted, and verify reports it (reportForks).
func (c *keyChain) trust(path, signer string, next note.Verifier, text string) {
	named := namedKey{next: integrity.KeyID(next.Name(), next.KeyHash()), note: path}
	first, ok := c.handedTo[signer]
	if !ok {
		c.handedTo[signer] = named
		if c.find(next.Name(), next.KeyHash()) < 0 {
			c.keys = append(c.keys, chainKey{v: next, note: path, signer: signer, text: text})
		}
		return
	}
	seen := slices.ContainsFunc(c.forks, func(f chainFork) bool { return f.signer == signer && f.second.next == named.next })
	if first.next != named.next && !seen {
		c.forks = append(c.forks, chainFork{signer: signer, first: first, second: named})
	}
}

// find is the place of the trusted key of that name and hash, -1 when
// none is. A key of a trusted key's name and hash is not trusted too: a
// note would not tell the two apart.
func (c *keyChain) find(name string, hash uint32) int {
	return slices.IndexFunc(c.keys, func(k chainKey) bool { return k.v.Name() == name && k.v.KeyHash() == hash })
}

// signerOf is the place of the trusted key, other than --key, that signs
// rec, a log's first checkpoint; -1 when --key signs it, or no key of the
// chain does (the log's check then fails as for any key).
func (c *keyChain) signerOf(rec []byte) int {
	if c == nil || len(c.keys) < 2 || rec == nil {
		return -1
	}
	if _, err := note.Open(rec, note.VerifierList(c.keys[0].v)); err == nil {
		return -1
	}
	n, err := note.Open(rec, c.verifiers())
	if err != nil {
		return -1
	}
	return c.find(n.Sigs[0].Name, n.Sigs[0].Hash)
}

// forkOf is the key (name+hash) that signer handed over to first, when
// its handover to next is a fork; "" when it is not.
func (c *keyChain) forkOf(signer, next note.Verifier) string {
	if c == nil {
		return ""
	}
	id, nextID := integrity.KeyID(signer.Name(), signer.KeyHash()), integrity.KeyID(next.Name(), next.KeyHash())
	for _, f := range c.forks {
		if f.signer == id && f.second.next == nextID {
			return f.first.next
		}
	}
	return ""
}

// reportForks reports each handover note that hands a trusted key over
// a second time, to another key.
func (v *verifier) reportForks() {
	if v.opts.chain == nil {
		return
	}
	for _, f := range v.opts.chain.forks {
		v.sum.Problems++
		_, _ = fmt.Fprintf(v.out, "%s: handover: %s signed a handover to %s in %s, and this one to %s: "+
			"a key hands over to one key, so one of the two notes is not the collector's; %s, read second, is not trusted\n",
			f.second.note, f.signer, f.first.next, f.first.note, f.second.next, f.second.next)
	}
}

// followChain checks the log at name, whose origin no handover read
// names and whose first checkpoint is first, with the key of the chain
// that signs it, and says so; the returned func restores the key. ok is
// false when no key of the chain but --key's signs it.
func (v *verifier) followChain(name, origin string, first []byte) (restore func(), ok bool) {
	i := v.opts.chain.signerOf(first)
	if i < 0 {
		return nil, false
	}
	k := v.opts.chain.keys[i]
	_, _ = fmt.Fprintf(v.out, "%s: handover: signed by %s, the next key of the handover note in %s, which %s signed\n",
		name, integrity.KeyID(k.v.Name(), k.v.KeyHash()), k.note, k.signer)
	v.checkChainOrigin(name, origin, k)
	if !v.opts.chain.witnessChecked[i] {
		v.opts.chain.witnessChecked[i] = true
		v.refuseNextKeyAsWitness(name, k.text)
	}
	v.openGiven(origin, k.v)
	before := v.opts.key
	v.opts.key = k.v
	return func() { v.opts.key = before }, true
}

// checkChainOrigin reports a log that a key of the chain signs under an
// origin that is not that key's: the collector names a file's log after
// the key that signs it (<key name>/<file>), and a log that starts from a
// handover note has the origin the note names. The key's holder signing
// a log of another key's name is not the collector's log of that key.
func (v *verifier) checkChainOrigin(name, origin string, k chainKey) {
	if strings.HasPrefix(origin, k.v.Name()+"/") || v.startsFromNoteFor(name, origin, k) {
		return
	}
	v.sum.Problems++
	_, _ = fmt.Fprintf(v.out, "%s: handover: signed by %s, the next key of a handover note, but its checkpoints name the log \"%s\", "+
		"not one of that key (\"%s/…\"), as the collector names its logs\n",
		name, integrity.KeyID(k.v.Name(), k.v.KeyHash()), origin, k.v.Name())
}

// startsFromNoteFor reports whether the note beside the log at name
// (PATH.handover), signed by a key of the chain, hands over to k under
// origin: a --next-origin need not start with the key's name.
func (v *verifier) startsFromNoteFor(name, origin string, k chainKey) bool {
	for _, signer := range v.opts.chain.keys {
		h, _, found, err := integrity.OpenHandoverNote(name, signer.v)
		if !found {
			return false
		}
		if err == nil {
			next, err := note.NewVerifier(h.NextKey)
			return err == nil && h.NextOrigin == origin && next.Name() == k.v.Name() && next.KeyHash() == k.v.KeyHash()
		}
	}
	return false
}
