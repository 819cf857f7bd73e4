package admission // import "github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"time"
)

// ConnListener bounds the connections open at once, shared between client
// addresses as the budgets are. Below the bound a connection is served at
// once. At it, a connection from an address holding at least two fewer
// than another takes the place of one of that address's connections
// without a request in flight (idle ones first), so that one client holding every
// connection idle cannot lock the others out. Otherwise it waits,
// accepted but not served, until a connection closes; the waiting
// connection of the address holding the fewest goes first, so one client
// holding every connection with requests, which pacing ends, cannot
// either. As many may wait as may be open; past that, the newcomer takes
// the waiting place of the address holding the most, open and waiting,
// if it holds at least two more, so one client filling both cannot lock
// the others out either.
type ConnListener struct {
	inner   net.Listener
	max     int
	onEvict func(reason string, client netip.Addr)

	mu      sync.Mutex
	open    int
	byAddr  map[netip.Addr][]*sharedConn // open connections, oldest first
	waiting []*sharedConn
	// waitingBy counts waiting's connections per address, kept as it
	// changes: a refused newcomer would otherwise count all of them anew.
	waitingBy map[netip.Addr]int
	ready     []net.Conn // admitted, for Accept to hand out
	err       error      // the inner listener's, once it failed for good
	closed    bool       // Close ran: connections accepted since are closed
	signal    chan struct{}
	done      chan struct{}
	doneOnce  sync.Once
}

// sharedConn is a connection counted to its address until it closes.
type sharedConn struct {
	net.Conn
	l         *ConnListener
	addr      netip.Addr
	state     http.ConnState // as the server last told: StateNew until then
	closeOnce sync.Once
}

// Close closes the connection and frees its place.
func (c *sharedConn) Close() error {
	err := c.Conn.Close()
	c.closeOnce.Do(func() { c.l.release(c) })
	return err
}

// Why a connection was closed to make room: idle between requests, new
// (no request read yet), or waiting (accepted, not yet served).
const (
	EvictedIdle    = "idle"
	EvictedNew     = "new"
	EvictedWaiting = "waiting"
)

// NewConnListener shares limit connections of inner between addresses.
// onEvict, if not nil, is told each connection closed to make room, with
// EvictedIdle, EvictedNew or EvictedWaiting and the address it counted to.
func NewConnListener(inner net.Listener, limit int, onEvict func(reason string, client netip.Addr)) *ConnListener {
	l := &ConnListener{
		inner:     inner,
		max:       limit,
		onEvict:   onEvict,
		byAddr:    map[netip.Addr][]*sharedConn{},
		waitingBy: map[netip.Addr]int{},
		signal:    make(chan struct{}, 1),
		done:      make(chan struct{}),
	}
	go l.acceptLoop()
	return l
}

// Accept returns the next connection admitted.
func (l *ConnListener) Accept() (net.Conn, error) {
	for {
		l.mu.Lock()
		if len(l.ready) > 0 {
			c := l.ready[0]
			l.ready = l.ready[1:]
			l.mu.Unlock()
			return c, nil
		}
		err := l.err
		l.mu.Unlock()
		if err != nil {
			return nil, err
		}
		select {
		case <-l.signal:
		case <-l.done:
			return nil, net.ErrClosed
		}
	}
}

// Close stops accepting and closes the connections still waiting.
func (l *ConnListener) Close() error {
	err := l.inner.Close()
	l.doneOnce.Do(func() { close(l.done) })
	l.mu.Lock()
	l.closed = true
	unserved := l.waiting
	for _, c := range l.ready {
		unserved = append(unserved, c.(*sharedConn))
	}
	l.waiting, l.ready = nil, nil
	clear(l.waitingBy)
	l.mu.Unlock()
	for _, c := range unserved {
		_ = c.Close()
	}
	return err
}

// Addr is the inner listener's address.
func (l *ConnListener) Addr() net.Addr { return l.inner.Addr() }

// ConnState is the http.Server hook that tells which connections have a
// request in flight.
func (l *ConnListener) ConnState(c net.Conn, s http.ConnState) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if sc, ok := c.(*sharedConn); ok {
		l.mu.Lock()
		sc.state = s
		l.mu.Unlock()
	}
}

// acceptLoop accepts from the inner listener until it fails for good.
func (l *ConnListener) acceptLoop() {
	var backoff time.Duration
	for {
		c, err := l.inner.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				// Out of file descriptors, say: as net/http does, wait
				// and try again.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			l.mu.Lock()
			l.err = err
			l.mu.Unlock()
			l.wake()
			return
		}
		backoff = 0
		l.place(&sharedConn{Conn: c, l: l, addr: connAddr(c)})
	}
}

// place admits c, in another address's place if need be, or makes it wait.
func (l *ConnListener) place(c *sharedConn) {
	l.mu.Lock()
	var evicted *sharedConn
	var reason string
	if !l.closed && l.open >= l.max {
		evicted, reason = l.victimLocked(c.addr)
	}
	switch {
	case l.closed:
		// Accepted as Close ran: nothing will serve or close it.
		l.mu.Unlock()
		_ = c.Conn.Close()
		return
	case l.open < l.max:
		l.admitLocked(c)
	case evicted != nil:
		// Its Close, later, finds it forgotten and frees no place.
		l.forgetLocked(evicted)
		l.admitLocked(c)
	case len(l.waiting) < l.max:
		l.waitLocked(c)
	default:
		i := l.waitingVictimLocked(c.addr)
		if i < 0 {
			l.mu.Unlock()
			_ = c.Conn.Close()
			return
		}
		// Never served, it was never counted open: its Close frees no place.
		evicted, reason = l.unwaitLocked(i), EvictedWaiting
		l.waitLocked(c)
	}
	l.mu.Unlock()
	if evicted != nil {
		_ = evicted.Close()
		if l.onEvict != nil {
			l.onEvict(reason, evicted.addr)
		}
	}
	l.wake()
}

// victimLocked is the connection a newcomer from addr takes the place of:
// of the address holding the most among those holding at least two more
// than addr, the oldest idle between requests, else the oldest new one;
// nil if none has either. The reason is EvictedIdle or EvictedNew. A request in flight is never cut: it ends,
// paced, within read_timeout. An idle one goes first because its client
// retries on a keep-alive connection the server closed, while a new one
// may be sending its first request's headers.
func (l *ConnListener) victimLocked(addr netip.Addr) (victim *sharedConn, reason string) {
	most := len(l.byAddr[addr]) + 1
	for _, cs := range l.byAddr {
		if len(cs) <= most {
			continue
		}
		i, r := slices.IndexFunc(cs, func(c *sharedConn) bool { return c.state == http.StateIdle }), EvictedIdle
		if i < 0 {
			i, r = slices.IndexFunc(cs, func(c *sharedConn) bool { return c.state == http.StateNew }), EvictedNew
		}
		if i >= 0 {
			victim, reason, most = cs[i], r, len(cs)
		}
	}
	return victim, reason
}

// waitingVictimLocked is the index in waiting of the connection a
// newcomer from addr takes the waiting place of: the newest of the address
// holding the most connections, open and waiting, among those holding at
// least two more than addr; -1 if none does.
func (l *ConnListener) waitingVictimLocked(addr netip.Addr) int {
	victim, most := -1, l.heldLocked(addr)+1
	for i := len(l.waiting) - 1; i >= 0; i-- {
		if n := l.heldLocked(l.waiting[i].addr); n > most {
			victim, most = i, n
		}
	}
	return victim
}

// heldLocked is how many connections addr holds, open and waiting.
func (l *ConnListener) heldLocked(addr netip.Addr) int {
	return len(l.byAddr[addr]) + l.waitingBy[addr]
}

// waitLocked makes c wait for a place.
func (l *ConnListener) waitLocked(c *sharedConn) {
	l.waiting = append(l.waiting, c)
	l.waitingBy[c.addr]++
}

// unwaitLocked takes the i-th waiting connection out of waiting.
func (l *ConnListener) unwaitLocked(i int) *sharedConn {
	c := l.waiting[i]
	l.waiting = slices.Delete(l.waiting, i, i+1)
	if l.waitingBy[c.addr]--; l.waitingBy[c.addr] == 0 {
		delete(l.waitingBy, c.addr)
	}
	return c
}

func (l *ConnListener) admitLocked(c *sharedConn) {
	l.open++
	l.byAddr[c.addr] = append(l.byAddr[c.addr], c)
	l.ready = append(l.ready, c)
}

// forgetLocked removes c from the open connections, if it is one.
func (l *ConnListener) forgetLocked(c *sharedConn) {
	cs := l.byAddr[c.addr]
	i := slices.Index(cs, c)
	if i < 0 {
		return
	}
	l.open--
	if cs = slices.Delete(cs, i, i+1); len(cs) == 0 {
		delete(l.byAddr, c.addr)
	} else {
		l.byAddr[c.addr] = cs
	}
}

// release frees c's place for the waiting connection of the address
// holding the fewest.
func (l *ConnListener) release(c *sharedConn) {
	l.mu.Lock()
	l.forgetLocked(c)
	admitted := false
	if l.open < l.max && len(l.waiting) > 0 {
		best := 0
		for i, w := range l.waiting {
			if len(l.byAddr[w.addr]) < len(l.byAddr[l.waiting[best].addr]) {
				best = i
			}
		}
		l.admitLocked(l.unwaitLocked(best))
		admitted = true
	}
	l.mu.Unlock()
	if admitted {
		l.wake()
	}
}

func (l *ConnListener) wake() {
	select {
	case l.signal <- struct{}{}:
	default:
	}
}

// connAddr is the address a connection counts to, as ClientAddr counts a
// request's bytes.
func connAddr(c net.Conn) netip.Addr {
	ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
	if err != nil {
		return netip.Addr{}
	}
	return shareKey(ap.Addr())
}
