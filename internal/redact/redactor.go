// Package redact cuts credentials out of audit event data: built-in
// detectors for high-confidence formats and secret-named values, the user's
// patterns and names, exceptions, and markers that name the kind cut
// (optionally with a keyed hash of the secret). It works on text only; the
// payload policy decides where it applies.
package redact

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unsafe"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// Redactor applies one effective redact policy. It is safe for concurrent
// use and never changes after New.
type Redactor struct {
	settings Settings
	patterns []*regexp.Regexp
	allow    []*regexp.Regexp
	keys     []string // normalized
	hashKey  []byte
}

// New builds the redactor for s; nil when s turns redaction off. Errors
// name the key (the config's Validate reports them first, at start).
func New(s Settings) (*Redactor, error) {
	if !s.Enabled {
		return nil, nil
	}
	r := &Redactor{settings: s}
	for i, p := range s.Patterns {
		re, err := compile(p)
		if err != nil {
			return nil, fmt.Errorf("patterns[%d]: %w", i, err)
		}
		r.patterns = append(r.patterns, re)
	}
	for i, p := range s.Allow {
		re, err := compile(p)
		if err != nil {
			return nil, fmt.Errorf("allow[%d]: %w", i, err)
		}
		r.allow = append(r.allow, re)
	}
	for _, k := range s.Keys {
		if n := normalizeName(k); n != "" {
			r.keys = append(r.keys, n)
		}
	}
	if s.HashKeyFile != "" {
		key, err := loadHashKey(s.HashKeyFile)
		if err != nil {
			return nil, fmt.Errorf("hash_key_file: %w", err)
		}
		r.hashKey = key
	}
	return r, nil
}

// Settings returns the policy r applies.
func (r *Redactor) Settings() Settings { return r.settings }

// String returns s with every secret cut, and whether anything was; c
// counts the cuts by kind. Text the prefilter rules out is not scanned:
// String runs per attribute and per member name, and most hold no trigger.
func (r *Redactor) String(s string, c *Counts) (string, bool) {
	if r.ruledOut(s) {
		return s, false
	}
	return r.redact(s, 0, scanOnly, c)
}

// ruledOut reports whether the prefilter rules out any cut in s: there
// are no user names or patterns, and s has no built-in detector's trigger
// (see triggerTrigrams).
func (r *Redactor) ruledOut(s string) bool {
	return len(r.patterns) == 0 && len(r.keys) == 0 &&
		!mayTrigger(s) && !mayHaveToolFlag(s) && !mayHaveEncodedName(s)
}

// firstCut is what the first pass over a value cuts before it scans.
type firstCut uint8

const (
	scanOnly        firstCut = iota
	cutWhole                 // all of it: the value of a name that says secret
	cutHeader                // its credential: the value of an Authorization member
	cutCookies               // its cookies' values: a Cookie member, curl's -b value
	cutSetCookie             // its cookie's value: a Set-Cookie member
	cutJoined                // its cookies' values after -b: curl's -bNAME=VALUE element
	scanShell                // nothing: it is a shell line (see scanner.shell), in every pass
	cutJoinedFlag            // all after its first two bytes: mysql's -pSECRET element
	cutUserPassword          // its password after the first ':', as scanner.userPassword: curl's -u user:password
)

// maxPasses bounds the passes over one string. A cut can make a new
// boundary (a user pattern's match taken out of a word leaves
// "Authorization" before a ':'), so the passes go on until one cuts
// nothing, within this bound.
const maxPasses = 4

// redact cuts s. first says what the first pass cuts before it scans: with
// cutWhole, all of s as kind unless it cannot be a secret.
func (r *Redactor) redact(s string, kind Kind, first firstCut, c *Counts) (string, bool) {
	changed := false
	for pass := 0; pass < maxPasses; pass++ {
		if pass > 0 && first != scanShell {
			first = scanOnly
		}
		out, cut := r.pass(s, kind, first, c)
		if !cut {
			break
		}
		s, changed = out, true
	}
	return s, changed
}

// pass makes one pass of the built-in detectors, then one of the user
// patterns.
func (r *Redactor) pass(s string, kind Kind, first firstCut, c *Counts) (string, bool) {
	sc := scanner{s: s, keys: r.keys, shell: first == scanShell}
	switch first {
	case cutWhole:
		sc.cutValue(0, len(s), kind)
	case cutHeader:
		sc.authorization(0)
	case cutCookies:
		sc.cookies(0, cookieList)
	case cutSetCookie:
		sc.cookies(0, cookieSet)
	case cutJoined:
		sc.cookies(len("-b"), cookieList)
	case cutJoinedFlag:
		sc.cutValue(len("-p"), len(s), kind)
	case cutUserPassword:
		sc.userPassword(0, 0, len(s))
	}
	if len(sc.spans) == 0 {
		sc.scan()
	}
	out, changed := r.apply(s, r.allowed(s, sc.spans), c)
	if len(r.patterns) == 0 {
		return out, changed
	}
	out2, changed2 := r.apply(out, r.allowed(out, r.patternSpans(out)), c)
	return out2, changed || changed2
}

// patternSpans are the user patterns' matches in s outside markers,
// merged where they overlap.
func (r *Redactor) patternSpans(s string) []span {
	markers := markerSpans(s)
	var spans []span
	for _, re := range r.patterns {
		group := 0
		if re.NumSubexp() > 0 {
			group = 1
		}
		for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
			lo, hi := m[2*group], m[2*group+1]
			if lo < 0 {
				// An alternative without the group matched: the
				// match is all there is to cut.
				lo, hi = m[0], m[1]
			}
			if lo < hi && !overlaps(markers, lo, hi) {
				spans = append(spans, span{lo, hi, KindCustomPattern})
			}
		}
	}
	return merge(spans)
}

// markerSpans lists the markers in s, in order.
func markerSpans(s string) []span {
	var out []span
	for i := 0; ; {
		k := strings.Index(s[i:], markerPrefix)
		if k < 0 {
			return out
		}
		k += i
		end, ok := markerAt(s, k)
		if !ok {
			i = k + 1
			continue
		}
		out = append(out, span{lo: k, hi: end})
		i = end
	}
}

// overlaps reports whether s[lo:hi] shares a byte with one of the sorted,
// disjoint spans.
func overlaps(spans []span, lo, hi int) bool {
	i, _ := slices.BinarySearchFunc(spans, lo, func(sp span, lo int) int { return sp.hi - 1 - lo })
	return i < len(spans) && spans[i].lo < hi
}

// merge sorts spans and joins overlapping ones, keeping the first kind.
func merge(spans []span) []span {
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b span) int { return a.lo - b.lo })
	out := spans[:1]
	for _, sp := range spans[1:] {
		last := &out[len(out)-1]
		if sp.lo < last.hi {
			last.hi = max(last.hi, sp.hi)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// allowed drops the spans whose text an allow pattern matches.
func (r *Redactor) allowed(s string, spans []span) []span {
	if len(r.allow) == 0 {
		return spans
	}
	return slices.DeleteFunc(spans, func(sp span) bool {
		for _, re := range r.allow {
			if re.MatchString(s[sp.lo:sp.hi]) {
				return true
			}
		}
		return false
	})
}

// apply replaces the spans (sorted, disjoint) of s by markers.
func (r *Redactor) apply(s string, spans []span, c *Counts) (string, bool) {
	if len(spans) == 0 {
		return s, false
	}
	out := make([]byte, 0, len(s)+32*len(spans))
	last := 0
	for _, sp := range spans {
		out = append(out, s[last:sp.lo]...)
		out = appendMarker(out, sp.kind, s[sp.lo:sp.hi], r.hashKey)
		last = sp.hi
		if c != nil {
			c[sp.kind]++
		}
	}
	out = append(out, s[last:]...)
	return string(out), true
}

// Data returns d with every string value redacted: by its own text, by the
// name of any member it sits under (a secret name cuts the whole value; an
// Authorization member, the credential of its header value; a Cookie or
// Set-Cookie member, the cookies' values; an auth member, a Basic
// credential), and after an argv flag that names a secret (["--password",
// "x"]) or curl's cookie flag (["-b", "a=b"], or ["curl", "-ba=b"] with
// the string joined to it). Member names are redacted as text, each on its
// own (auditevent.Data.MapKeys): a client may key a map by a credential.
func (r *Redactor) Data(d auditevent.Data, c *Counts) (auditevent.Data, bool) {
	if !r.mayCut(d.Bytes()) {
		return d, false
	}
	d, changed := r.walk(d, c)
	d, renamed := d.MapKeys(func(key string) (string, bool) { return r.String(key, c) })
	return d, changed || renamed
}

// MayCut reports whether Data might cut anything from d: false only when
// Data would return d unchanged and count nothing.
func (r *Redactor) MayCut(d auditevent.Data) bool { return r.mayCut(d.Bytes()) }

// walk redacts every string value of d, one by one.
func (r *Redactor) walk(d auditevent.Data, c *Counts) (auditevent.Data, bool) {
	return d.MapStrings(r.Values(c).Visit)
}

// Values redacts the string values of one tree of members and lists held
// other than as JSON text (a log record's map body) as Data redacts them:
// Visit each string value where it sits, in order, a list's elements one
// after another, site set as MapStrings sets it.
type Values struct{ v dataVisitor }

// Values starts the redaction of one tree's values; c counts the cuts.
func (r *Redactor) Values(c *Counts) *Values {
	vs := &Values{v: dataVisitor{r: r, c: c, sc: scanner{keys: r.keys}}}
	vs.v.names = vs.v.buf[:0]
	return vs
}

// Visit returns s, the string value at site, with every secret cut, and
// whether anything was.
func (vs *Values) Visit(site *auditevent.StringSite, s string) (string, bool) {
	return vs.v.visit(site, s)
}

// mayCut reports whether redacting the data object whose canonical text is
// text might cut anything; false only when it cannot. The built-in
// detectors run once over the text, as a probe that counts any secret name
// or format as a cut: the text of a data object without escapes is its
// strings' text with quotes and commas between them. Text with escapes,
// and user patterns, are walked value by value. Without user names, a
// prefilter first rules out text that has no detector's trigger and no
// backslash.
func (r *Redactor) mayCut(text []byte) bool {
	// The prefilter also passes text with a backslash, in the same pass.
	s := unsafe.String(unsafe.SliceData(text), len(text))
	if r.ruledOut(s) {
		return false
	}
	if len(r.patterns) > 0 {
		return true
	}
	if bytes.IndexByte(text, '\\') >= 0 {
		return true
	}
	sc := scanner{s: s, keys: r.keys, probe: true}
	sc.scan()
	return sc.hit
}

// dataVisitor redacts data string values, classifying each member name
// once per walk down to it rather than once per value below it.
type dataVisitor struct {
	r     *Redactor
	c     *Counts
	sc    scanner
	names []nameKind // the classification of site.Keys, as far as it is known
	buf   [8]nameKind
	// curl: an element of the array being walked runs curl, so a later
	// -bNAME=VALUE element is its cookie flag.
	curl bool
	// tool: the last element of the array being walked that is a tool
	// whose flags take a password (see tool).
	tool tool
	// cfg: how far the array being walked is through config set NAME.
	cfg configSet
}

type nameKind struct {
	name   string
	kind   Kind
	secret bool
}

func (v *dataVisitor) visit(site *auditevent.StringSite, s string) (string, bool) {
	v.curl = v.curl && site.HasPrev || isCurl(s)
	v.tool = argvTool(v.tool, s, !site.HasPrev)
	cfg := v.cfg
	if !site.HasPrev {
		cfg = noConfigSet
	}
	v.cfg = cfg.next(s)
	if cfg == sawName && !strings.HasPrefix(s, "-") {
		if k, ok := v.sc.secretName(site.Prev); ok {
			return v.r.redact(s, k, cutWhole, v.c)
		}
	}
	if k, ok := v.underSecretName(site.Keys); ok {
		return v.r.redact(s, k, cutWhole, v.c)
	}
	if site.HasPrev && !strings.HasPrefix(s, "-") { // a flag after a flag is no value
		if k, ok := v.sc.flagNeedsValue(site.Prev); ok {
			return v.r.redact(s, k, cutWhole, v.c)
		}
		if isCookieFlag(site.Prev) && !v.tool.ownsB() {
			return v.r.redact(s, 0, cutCookies, v.c)
		}
	}
	if first, ok := argvToolCut(v.tool, site.Prev, s, site.HasPrev); ok {
		return v.r.redact(s, KindPassword, first, v.c)
	}
	if v.curl && site.HasPrev && joinedCookiePair(s) {
		return v.r.redact(s, 0, cutJoined, v.c)
	}
	if shellLine(site) {
		return v.r.redact(s, 0, scanShell, v.c)
	}
	if n := len(site.Keys); n > 0 {
		last := site.Keys[n-1]
		if first, ok := headerCut(last); ok {
			return v.r.redact(s, 0, first, v.c)
		}
		if isAuthName(last) && basicCredential(s) {
			return v.r.redact(s, KindBasicAuth, cutWhole, v.c)
		}
	}
	return v.r.redact(s, 0, scanOnly, v.c)
}

// shellLine reports whether the string at site is a shell line: the
// command of an exec (a shell runs a command given as one string) or the
// script after a shell's -c (bash -lc). Its NAME=value start is a prefix
// assignment, PGPASSWORD=x psql ..., whose value ends at a blank.
func shellLine(site *auditevent.StringSite) bool {
	if site.HasPrev {
		return scriptFlag(site.Prev)
	}
	return len(site.Keys) == 1 && site.Keys[0] == "command"
}

// scriptFlag reports whether an argv element is -c, alone or ending a
// cluster of short flags (-lc, -euxc), as shells take a script.
func scriptFlag(arg string) bool {
	if len(arg) < 2 || arg[0] != '-' || arg[len(arg)-1] != 'c' {
		return false
	}
	for i := 1; i < len(arg); i++ {
		if !isLower(arg[i]) {
			return false
		}
	}
	return true
}

// headerCut is the first cut for the value of a member named as a header
// whose value holds credentials in a form of its own (Authorization,
// Cookie, Set-Cookie), and whether name is one.
func headerCut(name string) (firstCut, bool) {
	if isAuthorization(name) {
		return cutHeader, true
	}
	form, ok := cookieHeader(name)
	if form == cookieSet {
		return cutSetCookie, ok
	}
	return cutCookies, ok
}

// underSecretName reports the kind of the innermost member name in keys
// that says secret.
func (v *dataVisitor) underSecretName(keys []string) (Kind, bool) {
	n := 0
	for n < len(keys) && n < len(v.names) && v.names[n].name == keys[n] {
		n++
	}
	v.names = v.names[:n]
	for _, key := range keys[n:] {
		k, ok := v.sc.secretName(key)
		// A name with a marker was cut (Data cuts names): the marker's
		// words (github_token) are not the producer's, and judging them
		// would cut the value when a redacted line is redacted again.
		ok = ok && !strings.Contains(key, markerPrefix)
		v.names = append(v.names, nameKind{key, k, ok})
	}
	for i := len(v.names) - 1; i >= 0; i-- {
		if v.names[i].secret {
			return v.names[i].kind, true
		}
	}
	return 0, false
}

// Ptr redacts an optional string field in place of a copy: nil stays nil.
func (r *Redactor) Ptr(p *string, c *Counts) *string {
	if p == nil {
		return nil
	}
	if s, changed := r.String(*p, c); changed {
		return &s
	}
	return p
}
