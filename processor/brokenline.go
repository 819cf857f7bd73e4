package sandboxauditprocessor // import "github.com/sandboxaudit/sandboxaudit/processor"

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sandboxaudit/sandboxaudit/internal/redact"
)

// cutBrokenLine applies the policy without exec output to a body that may
// be an event line but does not decode as one (logmap.BodyNotDecoded), on
// a record the policy does not govern: a line cut short (a shipper's
// partial line, flushed before its end was written) or run on still holds
// the output its event would have had, which the exporter never lets
// through. Such a body loses everything from its first output member on
// (cutAtOutput), and what is left is cut as text. An object that is
// valid JSON is another application's log and stays as it is; bytes that
// are not UTF-8 hold no event (the exporter refuses them) and are cut.
func cutBrokenLine(body pcommon.Value, r *redact.Redactor, cuts *redact.Counts) {
	cutTextBody(body, func(s string) (string, bool) { return cutBrokenText(s, r, cuts) })
}

// cutBrokenText is what cutBrokenLine makes of a text body s.
func cutBrokenText(s string, r *redact.Redactor, cuts *redact.Counts) (out string, changed bool) {
	if utf8.ValidString(s) && json.Valid([]byte(s)) {
		return s, false
	}
	return cutUnparsed(s, r, cuts)
}

// cutUnparsed cuts s, text that does not parse as JSON, from its first
// output member on (cutAtOutput), then its credentials as text.
func cutUnparsed(s string, r *redact.Redactor, cuts *redact.Counts) (out string, changed bool) {
	out, changed = cutAtOutput(s)
	if r == nil {
		return out, changed
	}
	if cut, ok := r.String(out, cuts); ok {
		return cut, true
	}
	return out, changed
}

// cutAtOutput cuts s, text opening a JSON object that does not parse, at
// the first place an output member may begin: the key "stdout" or
// "stderr", or an escape, which may spell either. An event line's output
// lies after these keys, so what is cut is the output and what follows
// it; which part of broken JSON is a value cannot be known, so a key's
// spelling is enough.
func cutAtOutput(s string) (string, bool) {
	if !strings.HasPrefix(strings.TrimLeft(s, " \t\r\n"), "{") {
		return s, false
	}
	i := -1
	for _, key := range []string{`"stdout"`, `"stderr"`} {
		if j := strings.Index(s, key); j >= 0 && (i < 0 || j < i) {
			i = j
		}
	}
	// An escape cuts from the quote that opens its string.
	if j := strings.Index(s, `\u`); j >= 0 && (i < 0 || j < i) {
		i = max(strings.LastIndexByte(s[:j], '"'), 0)
	}
	if i < 0 {
		return s, false
	}
	return s[:i], true
}
