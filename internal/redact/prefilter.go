package redact

import "strings"

// The probe's prefilter rules out, in one table-driven pass, text in which
// no built-in detector can fire. Each detector needs one of:
//   - a secret name, which holds pass, pwd, secret, token, key or
//     credential (hasSecretStem), or is authorization or auth;
//   - bearer followed by a token;
//   - a fixed-format token: a run of at least minTriggerRun word bytes,
//     a PEM "-----BEGIN" or a JWT "eyJ";
//   - a URL password after "://";
//   - a cookie: a Cookie or Set-Cookie name, curl's --cookie, or its -b
//     before a quote, a blank or a joined cookie name.
//   - an Azure SAS signature: sv= earlier in its query.
//   - a URL password in an encoded URL, after "%3A%2F%2F" or, encoded
//     twice, "%253A%252F%252F".
//   - a .pgpass line: its port's last digit or '*', ':' and the first
//     byte of its database, a letter, '_' or '*' (pgpassDBStart).
//   - a Service Bus, Event Hubs or IoT Hub SAS token: its scheme,
//     SharedAccessSignature, is a long run.
// So text with none of the trigrams below (in any case) and no long run
// has nothing to cut ("pas", "pwd", "%2f" and "%25" share one, which also
// passes "pad", "pws", "%2d" and the like). The user's names and patterns
// are not covered: with either, the full probe runs.

// minTriggerRun is the shortest run a fixed-format detector matches (a
// Slack token: xox?- plus 10).
const minTriggerRun = 15

// triggerTrigrams start every trigger above, in lower case, as the bytes
// each of their three positions may hold; bytes are compared | 0x20 (ASCII
// letters to lower case, so "eyJ" is "eyj" and "-----" is "---"; other
// bytes may fold onto a trigger too, which only costs a full probe). The
// automaton has no bits for one more pattern, so "://" and curl's -b
// before a quote, a blank, a letter or a digit share one, which also
// passes a few texts no detector needs (":b ", "-//", "-bla"); "aut" and
// "sv=" share one the same way ("su=", "avt"), and so do "bea" and "eyj"
// ("bej", "eya"), which leaves one for a .pgpass line's "2:d" (a time's
// "12:30" is none, nor a file:line:col).
var triggerTrigrams = [...][3]string{
	{"p%", "aw2", "sdf5"}, {"s", "e", "c"}, {"t", "o", "k"}, {"k", "e", "y"}, {"c", "r", "e"}, {"as", "uv", "t="},
	{"be", "ey", "aj"}, {"0123456789*", ":", pgpassDBFolded}, {"-", "-", "-"}, {"c", "o", "o"},
	{":-", "/b", `/" '` + cookieNameStart},
}

// pgpassDBFolded holds the bytes a .pgpass database starts with
// (pgpassDBStart), as compared: an underscore folds to 0x7f.
const pgpassDBFolded = "abcdefghijklmnopqrstuvwxyz\x7f*"

// cookieNameStart holds the bytes a cookie name joined to curl's -b
// starts with in the trigger (-bsid=abc), as compared: an underscore folds
// to 0x7f.
const cookieNameStart = "abcdefghijklmnopqrstuvwxyz0123456789\x7f"

// triggers is a shift-and automaton over the trigrams, the long run and a
// backslash (data text with an escape is walked, not probed): each pattern
// owns consecutive bits of a uint64, bit k set while the last k+1 bytes
// match its first k+1; table[c] holds the positions byte c may fill. The
// bit after a pattern's last is a sink that every byte fills, so a match
// is still seen one byte later and hit needs updating only once per two
// bytes; hits holds the last bits and the sinks.
type triggers struct {
	table        [256]uint64
	starts, hits uint64
}

var triggerSet = func() (t triggers) {
	off := 0
	add := func(n int, matches func(k int, c byte) bool) {
		for k := range n {
			for c := range 256 {
				if matches(k, byte(c)) {
					t.table[c] |= 1 << (off + k)
				}
			}
		}
		for c := range 256 {
			t.table[c] |= 1 << (off + n)
		}
		t.starts |= 1 << off
		t.hits |= 3 << (off + n - 1)
		off += n + 1
	}
	for _, g := range triggerTrigrams {
		add(len(g), func(k int, c byte) bool { return strings.IndexByte(g[k], c|0x20) >= 0 })
	}
	add(minTriggerRun, func(_ int, c byte) bool { return wordByte[c] })
	add(1, func(_ int, c byte) bool { return c == '\\' })
	return t
}()

// mayTrigger reports whether a built-in detector might fire on s, or s
// holds a backslash; false only when neither. A pattern's last bit or its
// sink, once set, is kept in hit, so the test for it runs once per sixteen
// bytes rather than once per byte (on data that has no trigger, the usual
// case, the whole text is read either way).
func mayTrigger(s string) bool {
	t := &triggerSet
	starts := t.starts
	d, hit := uint64(0), uint64(0)
	i := 0
	for ; i+16 <= len(s); i += 16 {
		w := s[i : i+16]
		d = (d<<1 | starts) & t.table[w[0]]
		d = (d<<1 | starts) & t.table[w[1]]
		hit |= d
		d = (d<<1 | starts) & t.table[w[2]]
		d = (d<<1 | starts) & t.table[w[3]]
		hit |= d
		d = (d<<1 | starts) & t.table[w[4]]
		d = (d<<1 | starts) & t.table[w[5]]
		hit |= d
		d = (d<<1 | starts) & t.table[w[6]]
		d = (d<<1 | starts) & t.table[w[7]]
		hit |= d
		d = (d<<1 | starts) & t.table[w[8]]
		d = (d<<1 | starts) & t.table[w[9]]
		hit |= d
		d = (d<<1 | starts) & t.table[w[10]]
		d = (d<<1 | starts) & t.table[w[11]]
		hit |= d
		d = (d<<1 | starts) & t.table[w[12]]
		d = (d<<1 | starts) & t.table[w[13]]
		hit |= d
		d = (d<<1 | starts) & t.table[w[14]]
		d = (d<<1 | starts) & t.table[w[15]]
		hit |= d
		if hit&t.hits != 0 {
			return true
		}
	}
	for ; i < len(s); i++ {
		d = (d<<1 | starts) & t.table[s[i]]
		hit |= d
	}
	return hit&t.hits != 0
}
