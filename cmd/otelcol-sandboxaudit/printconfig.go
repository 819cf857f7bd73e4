package main

import (
	"bytes"
	"errors"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
)

// redactPrintConfig makes print-config, in its default redacted mode, hide
// the password of every URL it prints, as url.URL.Redacted does. The
// collector hides opaque values (headers, key material) itself, but an
// endpoint or proxy URL is a plain string, and one may carry a password
// (https://user:secret@host/). --mode unredacted is left as it is: it is
// asked for in so many words.
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
			_, werr := out.Write(redactURLPasswords(buf.Bytes()))
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
