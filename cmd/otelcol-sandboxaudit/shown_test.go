package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/otelcol"
)

// TestStartErrorIsEscaped: a path from the configuration reaches a start
// error raw through the operating system's error (a TLS CA file that
// cannot be opened); its escape sequence, carriage return, newline and
// bidirectional override are shown as escapes, on the error's one line.
func TestStartErrorIsEscaped(t *testing.T) {
	factories := distFactories(t)
	path := filepath.Join(t.TempDir(), "ca\x1b[31m\rFAKE\nexporters::x: \u202eevil")
	_, open := os.Open(path)
	require.Error(t, open)
	failed := fmt.Errorf("cannot start pipelines: %w", fmt.Errorf(`failed to start "sandboxaudit" exporter: %w`,
		errors.Join(fmt.Errorf("http::tls::ca_file: %w", open), errors.New("file: path: x"))))
	dir := filepath.Dir(path)
	assert.Equal(t, `cannot start pipelines: failed to start "sandboxaudit" exporter: http::tls::ca_file: open `+dir+
		`/ca\x1b[31m\x0dFAKE\nexporters::x: \u202eevil: no such file or directory`+"\n"+
		`failed to start "sandboxaudit" exporter: file: path: x`, errorText(failed, factories))
}

// TestRefusalQuotedIsEscapedOnce: a value the configuration check quotes
// (%q, already escaped) is shown as quoted, its backslashes not doubled;
// one it names raw (a key file it could not open) is escaped.
func TestRefusalQuotedIsEscapedOnce(t *testing.T) {
	dir := t.TempDir()
	msg := refusalText(t, dir, `receivers:
  sandboxaudit: {endpoint: "127.0.0.1:99999\e[31m\\x"}
exporters:
  sandboxaudit:
    file:
      path: `+filepath.Join(dir, "events.jsonl")+`
      integrity: {signing_key_file: "`+dir+`/key\e[31m\nFAKE"}
service:
  pipelines:
    logs: {receivers: [sandboxaudit], exporters: [sandboxaudit]}
`, distFactories(t))
	assert.Contains(t, msg, `(got "127.0.0.1:99999\x1b[31m\\x")`)
	assert.Contains(t, msg, `signing_key_file: open `+dir+`/key\x1b[31m\nFAKE: no such file or directory`)
	assert.NotContains(t, msg, "\x1b")
}

// TestShownTextQuotes: a double-quoted string is taken as already
// escaped only when it reads back as a Go string literal holding nothing
// unsafe; any other quote is text like the rest.
func TestShownTextQuotes(t *testing.T) {
	for in, want := range map[string]string{
		`a "b\x1b" c`:           `a "b\x1b" c`,
		`a "b` + "\x1b" + `" c`: `a "b\x1b" c`,
		`a "b\q" c\d`:           `a "b\\q" c\\d`,
		`open /x"y: no`:         `open /x"y: no`,
		`"\u202e" ` + "\u202e":  `"\u202e" \u202e`,
	} {
		assert.Equal(t, want, shownText(in), in)
	}
}

// TestPathNamedRawIsEscapedWhole: a path an operating system's error
// names raw is escaped whole, its backslashes doubled even between
// quotes: a file named to hold the text "\x1b" is not shown as one
// holding the escape character, whichever way the error is wrapped.
func TestPathNamedRawIsEscapedWhole(t *testing.T) {
	dir := t.TempDir()
	for name, shown := range map[string]string{
		`a"\x1b"b`:      `a"\\x1b"b`,
		"a\"\x1b\"b":    `a"\x1b"b`,
		`c"\n"FAKE"`:    `c"\\n"FAKE"`,
		"c\"\n\"FAKE\"": `c"\n"FAKE"`,
	} {
		_, open := os.Open(filepath.Join(dir, name))
		require.Error(t, open)
		want := "open " + dir + "/" + shown + ": no such file or directory"
		for wrapped, err := range map[string]error{
			"exporters::sandboxaudit: file: path: " + want: fmt.Errorf("exporters::sandboxaudit: file: path: %w", open),
			"exporters::sandboxaudit: " + want + " (hint)": fmt.Errorf("exporters::sandboxaudit: %w (hint)", open),
			"x: " + want + "\ny":                           fmt.Errorf("x: %w", errors.Join(open, errors.New("y"))),
		} {
			assert.Equal(t, wrapped, errorText(err, otelcol.Factories{}), "%q", name)
		}
	}
}

// TestDecodeErrorKeepsItsLines: the collector's decoding error puts a
// blank line between its heading and the errors it lists
// ("…following error(s):\n\n” bogus: unknown key"); those line breaks
// are its layout, not a value's, and stay.
func TestDecodeErrorKeepsItsLines(t *testing.T) {
	dir := t.TempDir()
	msg := refusalText(t, dir, `receivers:
  sandboxaudit: {endpoint: "127.0.0.1:8088", bogus: 1, other: 2}
exporters:
  sandboxaudit:
    file: {path: "`+dir+`/events.jsonl", max_open_files: "x"}
service:
  pipelines:
    logs: {receivers: [sandboxaudit], exporters: [sandboxaudit]}
`, otelcol.Factories{})
	assert.Contains(t, msg, "cannot unmarshal the configuration: decoding failed due to the following error(s):\n\n'receivers' error reading")
	assert.Contains(t, msg, "\n'' bogus: unknown key\nother: unknown key\n")
	assert.Contains(t, msg, "\n'max_open_files' expected type 'int'")
	assert.NotContains(t, msg, `\n`)
}
