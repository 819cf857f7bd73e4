package browser

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// hostile is markup that changes the page's title to PWNED-<where> if the
// browser ran it, as an element or as a URL.
func hostile(where string) string {
	return `<img src=x onerror="document.title='PWNED-` + where + `'"><script>document.title='PWNED-` + where +
		`'</script>javascript:document.title='PWNED-` + where + `'` + "\x1b[2J\u202e"
}

// jsonText is s as the text of a JSON string: quotes, backslashes and
// control or format characters escaped, as a canonical line has them.
func jsonText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r < 0x20 || r >= 0x7f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// hostileTrail writes, by hand, a failed exec and an open write whose
// every free-text field holds markup, in a file whose name holds some too.
func hostileTrail(t *testing.T) string {
	t.Helper()
	span, trace := jsonText(hostile("span")), jsonText(hostile("trace"))
	start := `{"data":{"command":["sh","-c","` + jsonText(hostile("command")) + `"]},"event_id":"00000000-0000-4000-8000-000000000001",` +
		`"op":"exec","parent_span_id":"` + jsonText(hostile("parent")) + `","phase":"start","seq":1,"session_id":"` + session +
		`","span_id":"` + span + `","trace_id":"` + trace + `","ts":"2026-03-14T15:09:26Z","version":1}`
	finish := `{"data":{"` + jsonText(hostile("key")) + `":"` + jsonText(hostile("value")) + `","exit_code":"` + jsonText(hostile("exit")) +
		`"},"duration_ms":12.5,"error_code":"exec_nonzero","error_message":"` + jsonText(hostile("message")) +
		`","error_retryable":null,"error_type":"` + jsonText(hostile("type")) + `","event_id":"00000000-0000-4000-8000-000000000002",` +
		`"ok":false,"op":"exec","parent_span_id":null,"phase":"finish","seq":2,"session_id":"` + session + `","span_id":"` + span +
		`","stderr":"` + jsonText(hostile("stderr")) + `","stdout":"` + jsonText(hostile("stdout")) + `","trace_id":"` + trace +
		`","ts":"2026-03-14T15:09:26.012500Z","version":1}`
	write := `{"data":{"path":"` + jsonText(hostile("path")) + `"},"event_id":"00000000-0000-4000-8000-000000000003",` +
		`"op":"write","parent_span_id":null,"phase":"start","seq":3,"session_id":"` + session + `","span_id":"w",` +
		`"trace_id":"` + trace + `","ts":"2026-03-14T15:09:27Z","version":1}`
	dir := t.TempDir()
	name := `events<img src=x onerror="document.title='PWNED-file'">` + "\u202elsonj" + `.jsonl`
	if err := os.WriteFile(filepath.Join(dir, name), []byte(start+"\n"+finish+"\n"+write+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestServeHostileFieldsInChromium opens every page of a trail whose
// every free-text field, and the file's name, holds markup and
// javascript: URLs: none runs, none becomes an element, no link leaves
// http(s).
func TestServeHostileFieldsInChromium(t *testing.T) {
	chromium := chromiumPath(t)
	base, printed := serve(t, buildCLI(t), hostileTrail(t))

	ctx, dialogs := openChromium(t, chromium)
	if err := chromedp.Do(ctx, chromedp.Navigate(printed), chromedp.WaitReady(chromedp.CSS("main"))); err != nil {
		t.Fatalf("%s: %v", printed, err)
	}

	const markup = `img, script, iframe, object, embed, [onerror], [onload], a[href^="javascript"], a:not([href^="/"]):not([href^="http://127.0.0.1:16686/"])`
	for _, path := range []string{"/", "/session/" + session, "/session/" + session + "/op/0", "/session/" + session + "/op/1"} {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+path), chromedp.WaitReady(chromedp.CSS("main"))); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		title, err := chromedp.Run(ctx, chromedp.Title())
		if err != nil {
			t.Fatal(err)
		}
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+strconvQuote(markup)+`).length`))
		if err != nil {
			t.Fatal(err)
		}
		text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(title, "PWNED") || dialogs.Load() != 0 || n != 0 {
			t.Errorf("%s: title %q, %d dialog(s), %d element(s) from the trail's text", path, title, dialogs.Load(), n)
		}
		if strings.ContainsAny(text, "\x1b\u202e") {
			t.Errorf("%s: an escape or a bidirectional override reached the page's text", path)
		}
		if !strings.Contains(text, "PWNED-") {
			t.Errorf("%s: the hostile text is not shown as text: %q", path, text)
		}
	}
}
