package webview

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/internal/safetext"
	"github.com/sandboxaudit/sandboxaudit/internal/trail"
)

//go:embed assets
var assets embed.FS

// csp allows the page's own stylesheet only: the pages have no script
// and no image (bars are inline SVG), so none may load or run, even from
// the view itself; no inline style, nothing from elsewhere, no framing.
const csp = "default-src 'none'; style-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

// Config is what serve was started with.
type Config struct {
	Sources []string // files and segments (trail.Expand), "-" for Stdin
	// TraceURL links an operation to its trace: {trace_id} and {span_id}
	// are replaced by the operation's ids; "" shows no link.
	TraceURL string
	Key      note.Verifier // nil: seals are reported, not checked
	Options  trail.Options // Stdin, TempDir, RunBytes; Bad is told of bad lines
}

// maxPages bounds the pages built at once: a page holds an operation's
// lines (up to the reader's 64 MiB each) while it is built and sent, so
// without a bound many requests at once would take that much each.
const maxPages = 4

// Server serves one trail, read once at start.
type Server struct {
	cfg Config
	ix  *index
	// slots holds a token per page being built and sent (maxPages).
	slots chan struct{}
	// waiting and building, when set (tests), run as a request waits for
	// a slot and once it holds one.
	waiting, building func()
	seals             []sealStatus
	pages             map[string]*template.Template
	trace             *traceTemplate
	// hosts are the Host header values accepted (loopback only): a page
	// asked for by another name is a DNS rebinding attempt.
	hosts map[string]bool
	// token, when set (RequireToken), is what a request must show, in the
	// cookie named cookie.
	token, cookie string
	// names are the host names a view beyond loopback answers to besides
	// its addresses and localhost; nil (and hosts nil) accepts any.
	names map[string]bool
}

// New reads the trail and checks its seals over the bytes it read.
func New(ctx context.Context, cfg Config) (*Server, error) {
	return newServer(ctx, cfg, nil)
}

// newServer is New; afterRead, when set, runs once the trail is read (a
// test changes the files there).
func newServer(ctx context.Context, cfg Config, afterRead func()) (*Server, error) {
	tt, err := parseTraceURL(cfg.TraceURL)
	if err != nil {
		return nil, err
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	seals := planSeals(cfg.Sources, cfg.Key)
	opts := cfg.Options
	opts.Tap = seals.writer
	ix, err := buildIndex(ctx, cfg.Sources, opts)
	if err != nil {
		seals.close()
		return nil, err
	}
	if afterRead != nil {
		afterRead()
	}
	return &Server{cfg: cfg, ix: ix, seals: seals.finish(), pages: pages, trace: tt, slots: make(chan struct{}, maxPages)}, nil
}

// Stats are what reading the trail counted.
func (s *Server) Stats() trail.Stats { return s.ix.stats }

// Close releases the view's spool.
func (s *Server) Close() error { return s.ix.Close() }

// AllowHosts accepts the given Host header values only (for a loopback
// listener: its address under the names loopback goes by). Nil accepts
// any, for an address bound on purpose to another interface.
func (s *Server) AllowHosts(addr net.Addr) {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return
	}
	port := fmt.Sprint(tcp.Port)
	names := []string{"localhost", "127.0.0.1", "[::1]", tcp.IP.String()}
	if tcp.IP.To4() == nil {
		names = append(names, "["+tcp.IP.String()+"]")
	}
	s.hosts = map[string]bool{}
	for _, h := range names {
		s.hosts[h+":"+port] = true
		if tcp.Port == 80 {
			s.hosts[h] = true // a browser leaves out http's default port
		}
	}
}

// AllowRemoteHosts is for a listener beyond loopback, which the
// investigator's own browser reaches too: a Host header naming an IP
// address or localhost is accepted, and the names given, and no other
// name, so that a web page elsewhere cannot rebind its name to the view.
func (s *Server) AllowRemoteHosts(names []string) {
	s.names = map[string]bool{}
	for _, n := range names {
		s.names[strings.TrimSuffix(strings.ToLower(n), ".")] = true
	}
}

// hostAllowed reports whether the view answers to a Host header value.
func (s *Server) hostAllowed(host string) bool {
	host = strings.ToLower(host)
	if s.hosts != nil {
		return s.hosts[host]
	}
	if s.names == nil {
		return true
	}
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	return net.ParseIP(name) != nil || name == "localhost" || s.names[strings.TrimSuffix(name, ".")]
}

func parsePages() (map[string]*template.Template, error) {
	pages := map[string]*template.Template{}
	for _, name := range []string{"sessions", "session", "op"} {
		t, err := template.New(name).Funcs(template.FuncMap{"shown": safetext.Escape, "shownField": shownField, "shownTrace": shownTrace, "shownJSON": safetext.EscapeJSON,
			"count": plural.Count[int64], "pick": plural.Pick[int64],
			"cutNote": func(t shownJSONText, page map[string]any) cutNote { return cutNote{t, page} }}).ParseFS(assets, "assets/base.html", "assets/pager.html", "assets/"+name+".html")
		if err != nil {
			return nil, err
		}
		pages[name] = t
	}
	return pages, nil
}

// Handler serves the pages and the embedded stylesheet.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.bounded(s.sessionsPage))
	mux.HandleFunc("GET /session/{id}", s.bounded(s.sessionPage))
	mux.HandleFunc("GET /session/{id}/op/{n}", s.bounded(s.opPage))
	static, _ := fs.Sub(assets, "assets")
	mux.Handle("GET /static/style.css", http.StripPrefix("/static/", http.FileServerFS(static)))
	return s.guard(mux)
}

// bounded serves a page once one of the maxPages slots is free, so the
// memory pages take is bounded however many requests come at once; a
// request that ends while it waits gets 503.
func (s *Server) bounded(page http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case s.slots <- struct{}{}:
		default:
			if s.waiting != nil {
				s.waiting()
			}
			select {
			case s.slots <- struct{}{}:
			case <-r.Context().Done():
				http.Error(w, "the view is busy building other pages", http.StatusServiceUnavailable)
				return
			}
		}
		defer func() { <-s.slots }()
		if s.building != nil {
			s.building()
		}
		page(w, r)
	}
}

// guard sets the security headers, refuses anything but reading,
// refuses a Host the view does not go by, and a request without the
// view's token.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "read-only view: only GET and HEAD", http.StatusMethodNotAllowed)
			return
		}
		if !s.hostAllowed(r.Host) {
			msg := "this view answers only to its loopback address (Host header not accepted)"
			if s.hosts == nil {
				msg = "this view answers only to an IP address, localhost or a name given with --allow-host (Host header not accepted)"
			}
			http.Error(w, msg, http.StatusMisdirectedRequest)
			return
		}
		if !s.admitted(w, r) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// render executes a page into a buffer first, so a failure is a clean 500.
func (s *Server) render(w http.ResponseWriter, page string, data any) {
	var buf bytes.Buffer
	if err := s.pages[page].ExecuteTemplate(&buf, "base", data); err != nil {
		http.Error(w, "could not render the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}
