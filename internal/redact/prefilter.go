package redact

// The probe's prefilter rules out, in one table-driven pass, text in which
// no built-in detector can fire. Each detector needs one of:
//   - a secret name, which holds pass, secret, token, key or credential
//     (hasSecretStem), or is authorization;
//   - bearer followed by a token;
//   - a fixed-format token: a run of at least minTriggerRun word bytes,
//     a PEM "-----BEGIN" or a JWT "eyJ";
//   - a URL password after "://".
// So text with none of the trigrams below (in any case) and no long run
// has nothing to cut. The user's names and patterns are not covered: with
// either, the full probe runs.

// minTriggerRun is the shortest run a fixed-format detector matches (a
// Slack token: xox?- plus 10).
const minTriggerRun = 15

// triggerTrigrams start every trigger above, in lower case; bytes are
// compared | 0x20 (ASCII letters to lower case, so "eyJ" is "eyj" and
// "-----" is "---"; other bytes may fold onto a trigger too, which only
// costs a full probe).
var triggerTrigrams = [...]string{"pas", "sec", "tok", "key", "cre", "aut", "bea", "eyj", "---", "://"}

// triggers is a shift-and automaton over the trigrams and the long run:
// each pattern owns consecutive bits of a uint64, bit k set while the last
// k+1 bytes match its first k+1; table[c] holds the positions byte c may
// fill.
type triggers struct {
	table        [256]uint64
	starts, ends uint64
}

var triggerSet = func() (t triggers) {
	off := 0
	for _, g := range triggerTrigrams {
		for k := 0; k < len(g); k++ {
			for c := 0; c < 256; c++ {
				if byte(c)|0x20 == g[k] {
					t.table[c] |= 1 << (off + k)
				}
			}
		}
		t.starts |= 1 << off
		t.ends |= 1 << (off + len(g) - 1)
		off += len(g)
	}
	for k := 0; k < minTriggerRun; k++ {
		for c := 0; c < 256; c++ {
			if wordByte[c] {
				t.table[c] |= 1 << (off + k)
			}
		}
	}
	t.starts |= 1 << off
	t.ends |= 1 << (off + minTriggerRun - 1)
	return t
}()

// mayTrigger reports whether a built-in detector might fire on s; false
// only when none can. A pattern's last bit, once set, is kept in hit, so
// the test for it runs once per eight bytes rather than once per byte (on
// data that has no trigger, the usual case, the whole text is read
// either way).
func mayTrigger(s string) bool {
	t := &triggerSet
	starts, ends := t.starts, t.ends
	d, hit := uint64(0), uint64(0)
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8]
		d = (d<<1 | starts) & t.table[w[0]]
		hit |= d
		d = (d<<1 | starts) & t.table[w[1]]
		hit |= d
		d = (d<<1 | starts) & t.table[w[2]]
		hit |= d
		d = (d<<1 | starts) & t.table[w[3]]
		hit |= d
		d = (d<<1 | starts) & t.table[w[4]]
		hit |= d
		d = (d<<1 | starts) & t.table[w[5]]
		hit |= d
		d = (d<<1 | starts) & t.table[w[6]]
		hit |= d
		d = (d<<1 | starts) & t.table[w[7]]
		hit |= d
		if hit&ends != 0 {
			return true
		}
	}
	for ; i < len(s); i++ {
		d = (d<<1 | starts) & t.table[s[i]]
		hit |= d
	}
	return hit&ends != 0
}
