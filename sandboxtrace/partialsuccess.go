package sandboxtrace

import (
	"strconv"
	"strings"
)

// lostOf is how many of n items an export that failed with err lost: all
// of them, unless the collector took the request and named how many it
// rejected (a partial success), then that many. A partial success with
// none rejected is a warning: nothing is lost.
func lostOf(n int, err error) int {
	k, ok := rejectedOnly(err)
	if !ok {
		return n
	}
	return int(min(max(k, 0), int64(n)))
}

// rejectedOnly reports whether err holds nothing but the exporters'
// partial success errors, and the items they say were rejected. The
// exporters (otlptracehttp, otlptracegrpc, otlploghttp, otlploggrpc) keep
// their error type internal, so it is read from its text, "OTLP partial
// success: MESSAGE (N spans rejected)", in an error that wraps nothing: a
// reply body quoted in another error cannot pass for one. Any other error
// in err's tree (a failed attempt, a timeout) and ok is false.
func rejectedOnly(err error) (n int64, ok bool) {
	switch u := err.(type) {
	case nil:
		return 0, false
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			k, ok := rejectedOnly(e)
			if !ok {
				return 0, false
			}
			n += k
		}
		return n, len(u.Unwrap()) > 0
	case interface{ Unwrap() error }:
		if inner := u.Unwrap(); inner != nil {
			return rejectedOnly(inner)
		}
	}
	_, tail, ok := splitPartial(err.Error())
	if !ok {
		return 0, false
	}
	// tail is " (N spans rejected)".
	count, _, _ := strings.Cut(strings.TrimPrefix(tail, " ("), " ")
	n, perr := strconv.ParseInt(count, 10, 64)
	return n, perr == nil
}

// splitPartial splits the text of a partial success error into the
// collector's message and the exporter's tail, " (N spans rejected)".
func splitPartial(text string) (msg, tail string, ok bool) {
	rest, ok := strings.CutPrefix(text, partialPrefix)
	i := strings.LastIndex(rest, " (")
	if !ok || i < 0 || !strings.HasSuffix(rest, " rejected)") {
		return "", "", false
	}
	return rest[:i], rest[i:], true
}
