package httpsink

import (
	"bytes"
	"net/http"
	"net/url"
	"slices"
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
	sortLongestFirst(out)
	return out
}

// withSent returns secrets plus the values of every header but our
// Content-Type that the request sent carried on the wire: what an auth
// extension or another round tripper added is unknown to the configuration,
// and an endpoint may echo it. sent is http.Response.Request, the request
// the innermost transport sent, so it holds them.
func withSent(secrets []string, sent *http.Request) []string {
	if sent == nil {
		return secrets
	}
	var values []string
	for k, vs := range sent.Header {
		if k != "Content-Type" {
			values = append(values, vs...)
		}
	}
	if len(values) == 0 {
		return secrets
	}
	out := append(slices.Clone(secrets), secretsOf("", values)...)
	sortLongestFirst(out)
	return out
}

// sortLongestFirst orders secrets so that a value is replaced before any
// part of it (replacing a part first would leave the rest readable).
func sortLongestFirst(secrets []string) {
	slices.SortStableFunc(secrets, func(a, b string) int { return len(b) - len(a) })
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
