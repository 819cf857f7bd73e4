package webview

import (
	"crypto/subtle"
	"net"
	"net/http"
	"path"
	"strconv"
)

// RequireToken makes the view answer only to a browser that shows token:
// in the query of the address serve prints, which the view trades for a
// cookie, then in that cookie. A loopback port is open to every user of
// the machine, while the trail is its owner's alone. The cookie is named
// after the view's port: cookies do not tell the ports of a host apart.
func (s *Server) RequireToken(token string, addr net.Addr) {
	s.token, s.cookie = token, "sandboxaudit-view"
	if tcp, ok := addr.(*net.TCPAddr); ok {
		s.cookie += "-" + strconv.Itoa(tcp.Port)
	}
}

// admitted reports whether r shows the view's token; false after
// answering (403, or a redirect that trades the token in the query for
// the cookie, so it leaves the address bar).
func (s *Server) admitted(w http.ResponseWriter, r *http.Request) bool {
	if s.token == "" {
		return true
	}
	q := r.URL.Query()
	if q.Has("token") {
		if !s.tokenIs(q.Get("token")) {
			http.Error(w, "this view needs the token in the address serve printed (token not accepted)", http.StatusForbidden)
			return false
		}
		// Lax: a link to the view from another site (a chat, a ticket)
		// opens it, while a page elsewhere that loads or fetches from the
		// view sends no cookie; the view changes nothing, so a navigation
		// from elsewhere can do nothing but show a page.
		http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
		q.Del("token")
		// Escaped and cleaned, so that neither a path of two slashes nor a
		// backslash, which a browser reads as a slash, can name another host.
		to := path.Clean("/" + r.URL.EscapedPath())
		if len(q) > 0 {
			to += "?" + q.Encode()
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
		return false
	}
	if c, err := r.Cookie(s.cookie); err == nil && s.tokenIs(c.Value) {
		return true
	}
	http.Error(w, "this view needs its token: open the address serve printed", http.StatusForbidden)
	return false
}

// tokenIs compares in constant time, so the answer's timing does not
// tell how much of a guess is right.
func (s *Server) tokenIs(v string) bool {
	return subtle.ConstantTimeCompare([]byte(v), []byte(s.token)) == 1
}
