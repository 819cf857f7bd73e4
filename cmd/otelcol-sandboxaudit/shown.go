package main

import (
	"errors"
	"io/fs"
	"strconv"
	"strings"

	"github.com/sandboxaudit/sandboxaudit/internal/safetext"
)

// shownError is err's text as main prints it: made safe for a terminal
// (see shownText), each error's own text escaped once. A config value
// (a path, an endpoint) reaches an error raw through the operating
// system's errors ("open <path>: …"); a newline or a carriage return
// in it is shown as an escape, so it cannot start a line that reads as
// another error. The newlines between the errors err joins stay.
func shownError(err error) string {
	if errs := joinedErrors(err); len(errs) > 0 {
		sep := "; "
		if texts := errorTexts(errs); err.Error() == strings.Join(texts, "\n") {
			sep = "\n"
		}
		shown := make([]string, len(errs))
		for i, e := range errs {
			shown[i] = shownError(e)
		}
		return strings.Join(shown, sep)
	}
	if pe, ok := err.(*fs.PathError); ok {
		return shownHead(err, "") + shownError(pe.Err)
	}
	text := err.Error()
	var b strings.Builder
	for _, inner := range wrapped(err) {
		i := strings.Index(text, inner.Error())
		if i < 0 {
			// Not the wrapped error's text as it is: shown as one text.
			return b.String() + shownText(text)
		}
		b.WriteString(shownLead(text[:i]))
		b.WriteString(shownError(inner))
		text = text[i+len(inner.Error()):]
	}
	return b.String() + shownText(text)
}

// shownLead is the text an error puts before the error it wraps, shown:
// escaped (shownText), but for the line breaks that end a heading
// ("decoding failed due to the following error(s):\n\n%w", the
// collector's decoding error), which lay out the errors listed after it.
// Only newlines right after a colon stay: a value's newline is escaped.
func shownLead(lead string) string {
	heading := strings.TrimRight(lead, "\n")
	if !strings.HasSuffix(heading, ":") {
		return shownText(lead)
	}
	return shownText(heading) + lead[len(heading):]
}

// shownHead is the head of err (splitHead) shown: escaped whole for an
// *fs.PathError, whose path is the configuration's raw text, never
// quoted by %q (a path holding the text "\x1b" is not one holding the
// escape character); otherwise shownText.
func shownHead(err error, head string) string {
	if pe, ok := err.(*fs.PathError); ok {
		return safetext.Escape(pe.Op+" "+pe.Path) + ": "
	}
	return shownText(head)
}

// wrapped are the errors err wraps, in order.
func wrapped(err error) []error {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		return joined.Unwrap()
	}
	if inner := errors.Unwrap(err); inner != nil {
		return []error{inner}
	}
	return nil
}

func errorTexts(errs []error) []string {
	texts := make([]string, len(errs))
	for i, e := range errs {
		texts[i] = e.Error()
	}
	return texts
}

// shownText is s escaped (safetext.Escape) but for the double-quoted
// strings in it that are already escaped: the collector and the
// components quote values with %q (`got "a\x1b"`), whose escapes a second
// escape would show as text ("a\\x1b"). A quoted string is taken as it
// is when it reads back as a Go string literal and holds nothing but
// backslashes that Escape would change.
func shownText(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			return b.String() + safetext.Escape(s)
		}
		b.WriteString(safetext.Escape(s[:i]))
		q, err := strconv.QuotedPrefix(s[i:])
		if err != nil || safetext.Escape(q) != strings.ReplaceAll(q, `\`, `\\`) {
			q = `"`
		}
		b.WriteString(q)
		s = s[i+len(q):]
	}
}
