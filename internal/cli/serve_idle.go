package cli

import (
	"net"
	"net/http"
	"sync"
)

// unusedConns tracks the view's connections that have not sent a request
// yet. http.Server.Shutdown waits for those as for requests in flight (a
// browser opens spare ones it may never use), so stopping closes them
// first: nothing is lost, the view is read-only.
type unusedConns struct {
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// track is an http.Server.ConnState hook.
func (u *unusedConns) track(c net.Conn, st http.ConnState) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if st == http.StateNew {
		u.conns[c] = struct{}{}
		return
	}
	delete(u.conns, c)
}

// closeAll closes the connections that have sent nothing yet.
func (u *unusedConns) closeAll() {
	u.mu.Lock()
	defer u.mu.Unlock()
	for c := range u.conns {
		_ = c.Close()
	}
	clear(u.conns)
}
