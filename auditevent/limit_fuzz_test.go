package auditevent_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// FuzzParseDataLimit: with a limit, data text is either canonicalized to
// the same bytes as without one, no longer than the limit, or refused with
// a *TooLongError exactly when its canonical text is longer (or it fails
// alike without the limit).
func FuzzParseDataLimit(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":"\u007f\u007f"}`, "{\"a\":\"\x7f\x7f\x7f\"}", `{"n":1e15,"m":[1.5e-7,{"b":null}]}`,
		`{"z":1,"a":"é日本😀"}`, `{"a":[[[[]]]]}`, `{"a":"\n\t\\\""}`} {
		f.Add(s, uint16(len(s)))
		f.Add(s, uint16(len(s)/2))
	}
	f.Fuzz(func(t *testing.T, text string, limit uint16) {
		if limit == 0 {
			return // no limit
		}
		whole, wholeErr := auditevent.ParseData([]byte(text))
		got, err := auditevent.ParseDataStringLimit(text, int(limit))
		var tl *auditevent.TooLongError
		switch {
		case err == nil:
			if wholeErr != nil || !bytes.Equal(got.Bytes(), whole.Bytes()) {
				t.Fatalf("with limit %d: %q, without: %q (%v)", limit, got.Bytes(), whole.Bytes(), wholeErr)
			}
			if len(got.Bytes()) > int(limit) && len(got.Bytes()) > 2 {
				t.Fatalf("%d bytes passed a limit of %d", len(got.Bytes()), limit)
			}
		case errors.As(err, &tl):
			if wholeErr == nil && len(whole.Bytes()) <= int(limit) {
				t.Fatalf("refused at limit %d, but its canonical text is %d bytes", limit, len(whole.Bytes()))
			}
		case wholeErr == nil:
			t.Fatalf("with limit %d: %v; without: ok", limit, err)
		}
	})
}
