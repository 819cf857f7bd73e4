package secretlog

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// minSecretPart is the shortest piece of a header value that is redacted on
// its own: shorter words ("Bearer", "Basic" are longer; "a", "to" are not
// secrets) would blank ordinary text.
const minSecretPart = 4

// Secrets lists what must never be shown of a client posting to endpoint
// with headerValues (header values, a proxy's credentials): every value,
// each of its space-separated parts (a server may echo only the token of
// "Bearer <token>"), and the endpoint's password and query values, in any
// order (Redact orders their forms).
func Secrets(endpoint string, headerValues []string) []string {
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
		if user, pass, ok := basicCredentials(v); ok {
			add(user + ":" + pass)
			add(pass)
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
	return out
}

// WithSent returns secrets plus the values of every header but our
// Content-Type that the request sent carried on the wire: what an auth
// extension or another round tripper added is unknown to the configuration,
// and an endpoint may echo it. sent is http.Response.Request, the request
// the innermost transport sent, so it holds them.
func WithSent(secrets []string, sent *http.Request) []string {
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
	return append(slices.Clone(secrets), Secrets("", values)...)
}

// basicCredentials decodes the user and password of a Basic Authorization
// value: an endpoint that decodes it may echo the password as it is.
func basicCredentials(v string) (user, pass string, ok bool) {
	r := http.Request{Header: http.Header{"Authorization": {v}}}
	return r.BasicAuth()
}
