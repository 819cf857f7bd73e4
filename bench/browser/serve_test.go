package browser

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Payloads an attacker who controls a command line could plant in the
// trail: each would change the page's title if the browser ran it.
const (
	imgPayload    = `<img src=x onerror="document.title='PWNED-img'">`
	scriptPayload = `<script>document.title='PWNED-script';alert(1)</script>`
	traceTemplate = "http://127.0.0.1:16686/trace/{trace_id}?uiFind={span_id}"
)

const (
	session = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b"
	traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
)

// line is one canonical audit line (keys sorted, as the exporter writes
// them); the fixture is written by hand so that the test does not depend
// on the code under test to build its input. failed is nil for a start.
func line(seq int, spanID, ts, data string, failed *bool) string {
	phase, pre, ok, post := "start", "", "", ""
	if failed != nil {
		phase, ok, post = "finish", `"ok":true,`, `"stderr":null,"stdout":null,`
		pre = `"duration_ms":250.0,"error_code":null,"error_message":null,"error_retryable":null,"error_type":null,`
		if *failed {
			ok = `"ok":false,`
			pre = `"duration_ms":1200.5,"error_code":"exec_nonzero","error_message":null,"error_retryable":null,"error_type":null,`
		}
	}
	return fmt.Sprintf(`{"data":%s,%s"event_id":"00000000-0000-4000-8000-%012d",%s"op":"exec","parent_span_id":null,"phase":"%s","seq":%d,"session_id":"%s","span_id":"%s",%s"trace_id":"%s","ts":"%s","version":1}`+"\n",
		data, pre, seq, ok, phase, seq, session, spanID, post, traceID, ts)
}

// jsonString quotes s for a JSON string, escaping what the canonical form
// escapes among the payloads' characters.
func jsonString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func fixture(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	cmd := func(s string) string { return `{"command":["sh","-c",` + jsonString(s) + `]}` }
	no, yes := false, true
	b.WriteString(line(1, "00f067aa0ba902b7", "2026-03-14T15:09:26Z", cmd("ls -la /workspace"), nil))
	b.WriteString(line(2, "00f067aa0ba902b8", "2026-03-14T15:09:26.100000Z", cmd(imgPayload), nil))
	b.WriteString(line(3, "00f067aa0ba902b7", "2026-03-14T15:09:26.250000Z", `{"exit_code":0}`, &no))
	b.WriteString(line(4, "00f067aa0ba902b9", "2026-03-14T15:09:26.400000Z", cmd(scriptPayload), nil))
	b.WriteString(line(5, "00f067aa0ba902b8", "2026-03-14T15:09:27.300500Z", `{"exit_code":2}`, &yes))
	// seq 4 never finishes: an open operation (its process was killed).
	p := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed (.ci/run installs Debian's chromium package)")
	}
	t.Skip("chromium not installed (apt-get install chromium); the browser test of serve is skipped")
	return ""
}

// buildCLI builds cmd/sandboxaudit from the main module beside bench/.
func buildCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "sandboxaudit")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/sandboxaudit")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build sandboxaudit: %v\n%s", err, out)
	}
	return bin
}

// serve starts sandboxaudit serve on a free loopback port and returns its
// base URL and the address it printed, whose token a browser trades for
// the view's cookie.
func serve(t *testing.T, bin, trail string) (base, printed string) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--trace-url", traceTemplate, trail)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			first <- sc.Text()
		}
		close(first)
	}()
	select {
	case l := <-first:
		_, rest, ok := strings.Cut(l, "http://")
		if !ok {
			t.Fatalf("serve said %q", l)
		}
		addr, _, _ := strings.Cut(rest, " ")
		origin, _, _ := strings.Cut(addr, "/")
		return "http://" + origin, "http://" + addr
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not start within 60 s")
	}
	return "", ""
}

func artifactDir(t *testing.T) string {
	if d := os.Getenv("SANDBOXAUDIT_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err == nil {
			return d
		}
	}
	return t.TempDir()
}

func TestServeInChromium(t *testing.T) {
	chromium := chromiumPath(t)
	base, printed := serve(t, buildCLI(t), fixture(t))
	shots := artifactDir(t)

	ctx, dialogs := openChromium(t, chromium)

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	shot := func(name string) {
		t.Helper()
		buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		must(err)
		p := filepath.Join(shots, name)
		must(os.WriteFile(p, buf, 0o644))
		t.Logf("screenshot: %s", p)
	}
	count := func(selector string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+strconvQuote(selector)+`).length`))
		must(err)
		return n
	}
	noPayloadRan := func(page string) {
		t.Helper()
		title, err := chromedp.Run(ctx, chromedp.Title())
		must(err)
		if strings.Contains(title, "PWNED") || dialogs.Load() != 0 {
			t.Errorf("%s: a payload ran: title %q, %d dialog(s)", page, title, dialogs.Load())
		}
		if imgs, scripts := count("img"), count("script"); imgs != 0 || scripts != 0 {
			t.Errorf("%s: %d img and %d script elements: a payload became markup", page, imgs, scripts)
		}
	}

	// The session list, at the address serve printed: its token becomes
	// the view's cookie, and leaves the address bar.
	must(chromedp.Do(ctx, chromedp.Navigate(printed), chromedp.WaitVisible(chromedp.CSS("table.sessions"))))
	if at, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`)); err != nil || at != base+"/" {
		t.Errorf("after the token: at %q (%v), want %q", at, err, base+"/")
	}
	listText, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("table.sessions")))
	must(err)
	if rows := count("table.sessions tbody tr"); rows != 1 || !strings.Contains(listText, session) {
		t.Fatalf("session list: %d rows, text %q", rows, listText)
	}
	shot("serve-sessions.png")
	noPayloadRan("session list")

	// The session's timeline: three operations, one failed, one open, the
	// payloads shown as text.
	must(chromedp.Do(ctx, chromedp.Navigate(base+"/session/"+session), chromedp.WaitVisible(chromedp.CSS("table.timeline"))))
	whatCells, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("td.what")].map(e => e.innerText)`))
	must(err)
	if bars, fail, open := count("svg.bar rect:not(.axis)"), count("svg.bar rect.fail"), count("svg.bar rect.open"); bars != 3 || fail != 1 || open != 1 {
		t.Errorf("timeline bars: %d (fail %d, open %d), want 3 (1, 1)", bars, fail, open)
	}
	joined := strings.Join(whatCells, "\n")
	for _, payload := range []string{imgPayload, scriptPayload} {
		if !strings.Contains(joined, payload) {
			t.Errorf("payload not shown as visible text: %q not in %q", payload, joined)
		}
	}
	shot("serve-timeline.png")
	noPayloadRan("timeline")

	// The open operation's detail, holding the script payload, and its
	// trace link built from the template.
	must(chromedp.Do(ctx, chromedp.Navigate(base+"/session/"+session+"/op/2"), chromedp.WaitVisible(chromedp.CSS("#start-line"))))
	startLine, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#start-line")))
	must(err)
	if !strings.Contains(startLine, `"<script>document.title='PWNED-script';alert(1)</script>"`) {
		t.Errorf("start line not shown as text: %q", startLine)
	}
	href, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#trace-link"), "href"))
	must(err)
	if want := "http://127.0.0.1:16686/trace/" + traceID + "?uiFind=00f067aa0ba902b9"; href.Value != want {
		t.Errorf("trace link %q, want %q", href.Value, want)
	}
	shot("serve-operation.png")
	noPayloadRan("operation")
}

func strconvQuote(s string) string { return strconv.Quote(s) }

// openChromium starts a headless Chromium for the test and counts the
// JavaScript dialogs its pages open (each is dismissed): a page that runs
// an attacker's script shows up as a dialog.
func openChromium(t *testing.T, chromium string) (context.Context, *atomic.Int32) {
	t.Helper()
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 900))
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancelTimeout)
	dialogs := new(atomic.Int32)
	opened := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range opened {
			if err != nil {
				return
			}
			dialogs.Add(1)
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return ctx, dialogs
}
