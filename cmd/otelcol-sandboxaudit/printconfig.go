package main

import (
	"bytes"
	"errors"
	"net/url"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sandboxaudit/sandboxaudit/internal/redact"
)

// redactPrintConfig makes print-config, in its default redacted mode, hide
// the password of every URL it prints, as url.URL.Redacted does, and the
// values of its query parameters whose names say they are secrets. The
// collector hides opaque values (headers, key material) itself, but an
// endpoint or proxy URL is a plain string, and one may carry a password
// (https://user:secret@host/) or a token (https://host/ingest?token=...).
// --mode unredacted is left as it is: it is asked for in so many words.
func redactPrintConfig(root *cobra.Command) {
	for _, c := range root.Commands() {
		if c.Name() != "print-config" || c.RunE == nil {
			continue
		}
		run := c.RunE
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if mode, _ := cmd.Flags().GetString("mode"); strings.EqualFold(mode, "unredacted") {
				return run(cmd, args)
			}
			out := cmd.OutOrStdout()
			var buf bytes.Buffer
			cmd.SetOut(&buf)
			err := run(cmd, args)
			cmd.SetOut(out)
			_, werr := out.Write(redactURLQueries(redactURLPasswords(buf.Bytes())))
			return errors.Join(err, werr)
		}
	}
}

// urlAuthority matches a URL's scheme and authority up to the last '@' of
// its user info. A '"' ends it too: the end of a JSON string (a URL holds
// none).
var urlAuthority = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^\s"/?#]*@`)

// redactURLPasswords replaces the password of each URL in text with
// "xxxxx", leaving the user name.
func redactURLPasswords(text []byte) []byte {
	return urlAuthority.ReplaceAllFunc(text, func(m []byte) []byte {
		start := bytes.Index(m, []byte("://")) + len("://")
		colon := bytes.IndexByte(m[start:], ':')
		if colon < 0 {
			return m // a user name alone
		}
		return append(append(append([]byte(nil), m[:start+colon+1]...), "xxxxx"...), '@')
	})
}

// urlQuery matches a URL up to the end of its query. A quote ends it too:
// the end of a JSON or YAML string.
var urlQuery = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^\s"'?#]*\?[^\s"'#]*`)

// querySeparators split a query's parameters; JSON output writes '&' as
// \u0026.
var querySeparators = []string{"&", ";", `\u0026`}

// redactURLQueries replaces with "xxxxx" the value of each URL query
// parameter in text whose name says it is a secret.
func redactURLQueries(text []byte) []byte {
	return urlQuery.ReplaceAllFunc(text, func(m []byte) []byte {
		q := bytes.IndexByte(m, '?') + 1
		out := append([]byte(nil), m[:q]...)
		for rest := m[q:]; len(rest) > 0; {
			end, sep := nextQuerySeparator(rest)
			out = append(append(out, redactQueryParam(rest[:end])...), rest[end:end+sep]...)
			rest = rest[end+sep:]
		}
		return out
	})
}

// nextQuerySeparator returns where the first parameter of q ends and the
// length of the separator there (0 at the end).
func nextQuerySeparator(q []byte) (end, sep int) {
	end, sep = len(q), 0
	for _, s := range querySeparators {
		if i := bytes.Index(q, []byte(s)); i >= 0 && i < end {
			end, sep = i, len(s)
		}
	}
	return end, sep
}

// redactQueryParam is name=value with its value hidden when the name says
// it is a secret.
func redactQueryParam(p []byte) []byte {
	eq := bytes.IndexByte(p, '=')
	if eq < 0 || eq == len(p)-1 {
		return p
	}
	name, err := url.QueryUnescape(string(p[:eq]))
	if err != nil {
		name = string(p[:eq])
	}
	if !secretQueryName(name) {
		return p
	}
	return append(append([]byte(nil), p[:eq+1]...), "xxxxx"...)
}

// secretQueryName reports whether a query parameter's name says its value
// is a secret: a name the redactor takes for one, or one that names a key
// or a signature alone, as URLs use them (?key=, Azure's ?sig=,
// X-Amz-Signature).
func secretQueryName(name string) bool {
	lower := strings.ToLower(name)
	return redact.SecretName(name) || lower == "key" || lower == "sig" || strings.HasSuffix(lower, "signature")
}
