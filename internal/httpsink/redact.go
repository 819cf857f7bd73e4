package httpsink

import (
	"bytes"
	"net/url"
	"strings"
)

// redactedMark replaces a secret in a response excerpt.
const redactedMark = "[REDACTED]"

// minSecretPart is the shortest piece of a header value that is redacted on
// its own: shorter words ("Bearer", "Basic" are longer; "a", "to" are not
// secrets) would blank ordinary text.
const minSecretPart = 4

// secretsOf lists what must never appear in a shown response body: every
// configured header value, each of its space-separated parts (a server may
// echo only the token of "Bearer <token>"), and the endpoint's password and
// query values. Longest first, so a value is replaced before its parts.
func secretsOf(endpoint string, headerValues []string) []string {
	var out []string
	add := func(v string) {
		if len(v) >= minSecretPart {
			out = append(out, v)
		}
	}
	for _, v := range headerValues {
		add(v)
		for _, f := range strings.Fields(v) {
			if f != v {
				add(f)
			}
		}
	}
	if u, err := url.Parse(endpoint); err == nil {
		if p, ok := u.User.Password(); ok {
			add(p)
		}
		for _, vs := range u.Query() {
			for _, v := range vs {
				add(v)
			}
		}
	}
	// Longest first: insertion sort, the list is short.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && len(out[j]) > len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// redact replaces every secret in b, and drops a tail of b that is the
// start of a secret (a read limit can cut a secret in two).
func redact(b []byte, secrets []string) []byte {
	for _, s := range secrets {
		b = bytes.ReplaceAll(b, []byte(s), []byte(redactedMark))
	}
	for _, s := range secrets {
		for n := min(len(s)-1, len(b)); n > 0; n-- {
			if bytes.HasSuffix(b, []byte(s[:n])) {
				b = b[:len(b)-n]
				break
			}
		}
	}
	return b
}
