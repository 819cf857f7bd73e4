package filesink

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/sandboxaudit/sandboxaudit/internal/safetext"
)

const (
	phSessionID    = "session_id"
	phSessionIDHex = "session_id_hex"
)

// pathTemplate is a parsed Options.Path.
type pathTemplate struct {
	// base is the absolute, cleaned directory every expanded path must stay
	// inside: the literal directory before the first placeholder.
	base string
	// rest holds the path elements below base (each may hold placeholders).
	// It is empty for a template without placeholders.
	rest []string
	// static is the whole path when the template has no placeholders.
	static string
}

// HasPlaceholder reports whether path holds a placeholder the sink
// expands, for keys that take a plain path only.
func HasPlaceholder(path string) bool {
	return strings.Contains(path, "{"+phSessionID+"}") || strings.Contains(path, "{"+phSessionIDHex+"}")
}

// ValidatePath reports whether path is a file path or path template the
// sink accepts. The error does not name the key (the caller does).
func ValidatePath(path string) error {
	t, err := parseTemplate(path)
	if err != nil || t.static == "" {
		return err // a templated path is checked as each file is opened
	}
	// Every batch to these would fail while the collector says it is
	// ready, so they are refused at start.
	fi, err := os.Lstat(t.static)
	switch {
	case err != nil:
		return nil // made at the first write
	case fi.IsDir():
		return fmt.Errorf("%s is a directory; name a file in it", path)
	case fi.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("%s: %w; name the file itself", path, ErrSymlink)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	return CheckNotSpool(path)
}

// CheckNotSpool refuses a plain path with an HTTP sink's spool sidecars
// beside it (ErrSpoolFile): a spool opened after ValidatePath looked. A
// templated path is checked as each file is opened.
func CheckNotSpool(path string) error {
	t, err := parseTemplate(path)
	if err != nil || t.static == "" {
		return err
	}
	if hasSpoolSidecars(t.static, func(p string) bool { _, err := os.Lstat(p); return err == nil }) {
		return fmt.Errorf("%s: %w", path, ErrSpoolFile)
	}
	return nil
}

// BaseDir is the directory every file of path lies below: a template's
// literal directory before its first placeholder, a plain path's own
// directory. Integrity names files below it in their checkpoints.
func BaseDir(path string) (string, error) {
	t, err := parseTemplate(path)
	return t.base, err
}

// Matcher returns a test of whether a file (absolute, cleaned) is one
// path gives: the path itself, or the template expanded for some session
// id (a canonical UUID, as the events carry). A rotated copy
// (events.jsonl.1) or any other file below the base does not match. The
// template is parsed and its elements compiled once.
func Matcher(path string) (func(file string) bool, error) {
	t, err := parseTemplate(path)
	if err != nil {
		return nil, err
	}
	if t.static != "" {
		return func(file string) bool { return file == t.static }, nil
	}
	patterns := make([]*regexp.Regexp, len(t.rest))
	for i, e := range t.rest {
		patterns[i] = elementPattern(e)
	}
	return func(file string) bool {
		rel, err := filepath.Rel(t.base, file)
		if err != nil || !filepath.IsLocal(rel) {
			return false
		}
		elems := strings.Split(filepath.ToSlash(rel), "/")
		if len(elems) != len(patterns) {
			return false
		}
		for i, p := range patterns {
			if !p.MatchString(elems[i]) {
				return false
			}
		}
		return true
	}, nil
}

// elementPattern is a template element as a regexp: its literal text, and
// a lowercase canonical UUID (or its 32 hex digits) for each placeholder.
func elementPattern(elem string) *regexp.Regexp {
	const hex = "[0-9a-f]"
	uuid := fmt.Sprintf("%[1]s{8}-%[1]s{4}-%[1]s{4}-%[1]s{4}-%[1]s{12}", hex)
	var b strings.Builder
	b.WriteString("^")
	for rest := elem; rest != ""; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(regexp.QuoteMeta(rest))
			break
		}
		end := strings.IndexByte(rest, '}') // balanced: checkPlaceholders
		b.WriteString(regexp.QuoteMeta(rest[:i]))
		if rest[i+1:end] == phSessionIDHex {
			b.WriteString(hex + "{32}")
		} else {
			b.WriteString(uuid)
		}
		rest = rest[end+1:]
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// CheckFileName refuses a path that cannot name a file whatever exists:
// one holding a NUL, or naming a directory (a trailing "/", a last
// element "." or ".."), which filepath.Clean would otherwise turn into the
// name of a file. It refuses what is never meant either: a control
// character (a trailing newline from an environment variable names a file
// nobody looks for) and a leading "~/", which only a shell expands. The
// error does not name the key (the caller does).
func CheckFileName(path string) error {
	if strings.IndexByte(path, 0) >= 0 {
		return errors.New("contains a NUL byte")
	}
	if i := strings.IndexFunc(path, func(r rune) bool { return r < 0x20 || r == 0x7f }); i >= 0 {
		return fmt.Errorf("holds the control character 0x%02x at byte %d", path[i], i)
	}
	if strings.HasPrefix(path, "~/") {
		return fmt.Errorf("%q begins with \"~/\", which is not expanded; write the home directory's path", path)
	}
	if last := path[strings.LastIndexByte(path, '/')+1:]; last == "" || last == "." || last == ".." {
		return fmt.Errorf("%q names a directory, not a file", path)
	}
	return nil
}

func parseTemplate(raw string) (pathTemplate, error) {
	if raw == "" {
		return pathTemplate{}, errors.New("must be set")
	}
	if err := CheckFileName(raw); err != nil {
		return pathTemplate{}, err
	}
	if err := checkPlaceholders(raw); err != nil {
		return pathTemplate{}, err
	}
	elems := strings.Split(raw, "/")
	first := -1
	for i, e := range elems {
		if strings.Contains(e, "{") {
			first = i
			break
		}
	}
	if first < 0 {
		abs, err := filepath.Abs(raw)
		if err != nil {
			return pathTemplate{}, fmt.Errorf("%q: %w", raw, err)
		}
		return pathTemplate{base: filepath.Dir(abs), static: abs}, nil
	}
	// Below the base, "." and ".." would let the layout step sideways or
	// up, and an empty element ("a//b") hides a level; reject them so the
	// templated part is exactly what it looks like.
	rest := elems[first:]
	for _, e := range rest {
		if e == "" || e == "." || e == ".." {
			return pathTemplate{}, fmt.Errorf("element %q after the first placeholder is not allowed in %q", e, raw)
		}
	}
	prefix := strings.Join(elems[:first], "/")
	switch {
	case first == 0:
		prefix = "."
	case prefix == "":
		prefix = "/" // template like "/{session_id}.jsonl"
	}
	base, err := filepath.Abs(prefix)
	if err != nil {
		return pathTemplate{}, fmt.Errorf("%q: %w", raw, err)
	}
	return pathTemplate{base: base, rest: rest}, nil
}

// checkPlaceholders accepts only {session_id} and {session_id_hex}, with
// balanced braces.
func checkPlaceholders(s string) error {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '}':
			return fmt.Errorf("unmatched '}' at byte %d in %q", i, s)
		case '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return fmt.Errorf("unmatched '{' at byte %d in %q", i, s)
			}
			name := s[i+1 : i+end]
			if name != phSessionID && name != phSessionIDHex {
				return fmt.Errorf("unknown placeholder %q in %q (known: {%s}, {%s})", s[i:i+end+1], s, phSessionID, phSessionIDHex)
			}
			i += end
		}
	}
	return nil
}

// expand returns the file path for sessionID, guaranteed to lie inside the
// template's base directory.
func (t pathTemplate) expand(sessionID string) (string, error) {
	if t.static != "" {
		return t.static, nil
	}
	if err := checkSessionID(sessionID); err != nil {
		return "", err
	}
	hex := strings.ReplaceAll(sessionID, "-", "")
	r := strings.NewReplacer("{"+phSessionIDHex+"}", hex, "{"+phSessionID+"}", sessionID)
	elems := make([]string, 0, len(t.rest)+1)
	elems = append(elems, t.base)
	for _, e := range t.rest {
		x := r.Replace(e)
		// Two placeholders side by side could still spell "..".
		if x == "" || x == "." || x == ".." {
			return "", fmt.Errorf("session id expands to path element %q", x)
		}
		elems = append(elems, x)
	}
	p := filepath.Join(elems...) // Join cleans
	rel, err := filepath.Rel(t.base, p)
	if err != nil || rel == "." || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("session id expands to a path outside %q", t.base)
	}
	return p, nil
}

// checkSessionID rejects values that could change the path's shape. A
// canonical UUID always passes.
func checkSessionID(id string) error {
	if id == "" {
		return errors.New("session id is empty")
	}
	if len(id) > 128 {
		return fmt.Errorf("session id is %d bytes long, limit 128", len(id))
	}
	if id == "." || id == ".." {
		return errors.New("session id \".\" or \"..\" is not allowed in a path")
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c == '/' || c == '\\' || c < 0x20 || c == 0x7f {
			return fmt.Errorf("session id contains byte 0x%02x at byte %d, not allowed in a path", c, i)
		}
	}
	return nil
}

// nameMax is the longest name a directory entry may have (NAME_MAX on
// Linux and on the other systems the sink builds for).
const nameMax = 255

// sampleSessionID stands for every session id in a length check: ids are
// canonical UUIDs, all of one length.
const sampleSessionID = "00000000-0000-0000-0000-000000000000"

// SegmentNameGrowth is how much longer than its file's name a closed
// segment's name gets: the time and number, then .zst.tmp while it is
// compressed (numbers past 999999 add a digit each, not counted).
const SegmentNameGrowth = len("-") + len(segmentTimeLayout) + len("-000001") + len(ZstdSuffix) + len(tmpSuffix)

// CheckNameLength refuses a path with an element longer than a directory
// entry may be, each placeholder counted as the session id it becomes,
// and the file's name counted with growth, the most the names made beside
// it add (segments, sidecars): no file of it could ever be made, so every
// batch would fail. The error does not name the key (the caller does).
func CheckNameLength(path string, growth int) error {
	t, err := parseTemplate(path)
	if err != nil {
		return err
	}
	elems := strings.Split(t.static, string(filepath.Separator))
	if t.static == "" {
		elems = append(strings.Split(t.base, string(filepath.Separator)), t.rest...)
	}
	r := strings.NewReplacer("{"+phSessionIDHex+"}", strings.ReplaceAll(sampleSessionID, "-", ""), "{"+phSessionID+"}", sampleSessionID)
	for i, e := range elems {
		n, extra := len(r.Replace(e)), 0
		if i == len(elems)-1 {
			extra = growth
		}
		if n+extra <= nameMax {
			continue
		}
		shown := safetext.EscapeCut(e, 40)
		if extra == 0 {
			return fmt.Errorf("\"%s\" is %d bytes, longer than the %d bytes a file name may have", shown, n, nameMax)
		}
		return fmt.Errorf("\"%s\" is %d bytes, and with the %d that rotated segments or integrity sidecars add to it, longer than the %d bytes a file name may have", shown, n, extra, nameMax)
	}
	return nil
}
