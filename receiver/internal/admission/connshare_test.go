package admission

import (
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dialFrom connects to l from the loopback address local.
func dialFrom(t *testing.T, l net.Listener, local string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	c, err := d.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestConnListenerEvictsWhileClosing: connections of the address holding
// every place close while other addresses take their places. Every
// connection is admitted once, and the count of open connections ends
// where the closes leave it.
func TestConnListenerEvictsWhileClosing(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	const limit = 4
	l := NewConnListener(inner, limit, nil)
	t.Cleanup(func() { _ = l.Close() })

	accept := func() net.Conn {
		c, err := l.Accept()
		require.NoError(t, err)
		return c
	}
	for round := range 20 {
		held := make([]net.Conn, limit)
		for i := range held {
			dialFrom(t, l, "127.0.0.2")
			held[i] = accept()
		}
		// A newcomer evicts one of held while held close themselves.
		var wg sync.WaitGroup
		for _, c := range held {
			wg.Go(func() { _ = c.Close() })
		}
		dialFrom(t, l, "127.0.0.3")
		newcomer := accept()
		wg.Wait()
		l.mu.Lock()
		open, waiting := l.open, len(l.waiting)
		l.mu.Unlock()
		assert.Equal(t, 1, open, "round %d: only the newcomer is open", round)
		assert.Zero(t, waiting, "round %d", round)
		require.NoError(t, newcomer.Close())
	}
}

// TestConnListenerWaitingGoesFirstByFewest: at the bound, a connection of
// an address already holding its share waits, and the one of the address
// holding the fewest is admitted first when a place frees.
func TestConnListenerWaitingGoesFirstByFewest(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := NewConnListener(inner, 2, nil)
	t.Cleanup(func() { _ = l.Close() })

	dialFrom(t, l, "127.0.0.2")
	a, err := l.Accept()
	require.NoError(t, err)
	dialFrom(t, l, "127.0.0.3")
	b, err := l.Accept()
	require.NoError(t, err)
	dialFrom(t, l, "127.0.0.2")
	waitWaiting(t, l, 1)
	dialFrom(t, l, "127.0.0.4")
	waitWaiting(t, l, 2)
	require.NoError(t, b.Close())
	next, err := l.Accept()
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.4", next.RemoteAddr().(*net.TCPAddr).IP.String(),
		"the address holding none goes before the one holding a connection")
	_ = a.Close()
	_ = next.Close()
}

// waitWaiting waits, boundedly, for n connections to wait for a place.
func waitWaiting(t *testing.T, l *ConnListener, n int) {
	t.Helper()
	waitCount(t, &l.mu, func() int { return len(l.waiting) }, n, "connections never waited")
}

// waitCount waits, boundedly, for count, read under mu, to reach n;
// failure says what did not happen.
func waitCount(t *testing.T, mu *sync.Mutex, count func() int, n int, failure string) {
	t.Helper()
	for range 1000 {
		mu.Lock()
		got := count()
		mu.Unlock()
		if got >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%d %s", n, failure)
}

// TestConnListenerClosedClosesLateArrivals: a connection the inner
// listener hands over once Close ran is closed, not left unserved.
func TestConnListenerClosedClosesLateArrivals(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := NewConnListener(inner, 1, nil)
	require.NoError(t, l.Close())
	client, server := net.Pipe()
	t.Cleanup(func() { _ = client.Close() })
	require.NoError(t, client.SetReadDeadline(time.Now().Add(5*time.Second)))
	l.place(&sharedConn{Conn: server, l: l})
	_, err = client.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the late connection is closed")
	l.mu.Lock()
	defer l.mu.Unlock()
	assert.Zero(t, l.open)
	assert.Empty(t, l.ready)
}

// TestConnListenerNeverCutsARequest: a newcomer takes the place of a
// connection without a request in flight only; while all have one, it
// waits, and it goes first once one closes.
func TestConnListenerNeverCutsARequest(t *testing.T) {
	l, held := fullFromOneAddress(t, nil)
	for _, c := range held {
		l.ConnState(c, http.StateActive)
	}
	dialFrom(t, l, "127.0.0.3")
	waitWaiting(t, l, 1)
	dialFrom(t, l, "127.0.0.2")
	waitWaiting(t, l, 2)

	require.NoError(t, held[2].Close())
	next, err := l.Accept()
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.3", next.RemoteAddr().(*net.TCPAddr).IP.String())

	// Idle, a connection of the first client, which holds two, gives its
	// place to a newcomer of an address holding none.
	l.ConnState(held[0], http.StateIdle)
	dialFrom(t, l, "127.0.0.4")
	fourth, err := l.Accept()
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.4", fourth.RemoteAddr().(*net.TCPAddr).IP.String())
	_, err = held[0].Read(make([]byte, 1))
	assert.ErrorIs(t, err, net.ErrClosed, "the idle connection was closed")
	_, err = held[1].Write([]byte{0})
	assert.NoError(t, err, "the connection with a request in flight stays")
}

// TestConnListenerTakesAnIdleConnectionFirst: of an address's connections
// without a request in flight, a newcomer takes the place of one idle
// between requests (its client retries there) before a new one, which may
// be sending its first request's headers. Each is reported with its state
// and address.
func TestConnListenerTakesAnIdleConnectionFirst(t *testing.T) {
	var evicted evictions
	l, held := fullFromOneAddress(t, evicted.record)
	// The oldest is new (no request read yet); the youngest is idle.
	l.ConnState(held[0], http.StateNew)
	l.ConnState(held[1], http.StateActive)
	l.ConnState(held[2], http.StateIdle)
	dialFrom(t, l, "127.0.0.3")
	_, err := l.Accept()
	require.NoError(t, err)
	_, err = held[0].Write([]byte{0})
	require.NoError(t, err, "the new connection stays")
	// Bounded: a connection left open would block the read for good (on
	// a closed one the deadline fails, and the read says why).
	_ = held[2].SetReadDeadline(time.Now().Add(time.Minute))
	_, err = held[2].Read(make([]byte, 1))
	assert.ErrorIs(t, err, net.ErrClosed, "the idle connection was closed")

	// The first client still holds two: a fourth address takes the new
	// one's place.
	dialFrom(t, l, "127.0.0.4")
	_, err = l.Accept()
	require.NoError(t, err)
	assert.Equal(t, []string{EvictedIdle + " 127.0.0.2", EvictedNew + " 127.0.0.2"}, evicted.list())
}

// evictions records the connections a listener closed to make room, as
// "reason address".
type evictions struct {
	mu  sync.Mutex
	got []string
}

func (e *evictions) record(reason string, client netip.Addr) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, reason+" "+client.String())
}

func (e *evictions) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.got)
}

// fullFromOneAddress is a listener of three places, all held by
// 127.0.0.2, and the connections it accepted for them;
// onEvict, if not nil, is told the connections it closes to make room.
func fullFromOneAddress(t *testing.T, onEvict func(string, netip.Addr)) (*ConnListener, []net.Conn) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := NewConnListener(inner, 3, onEvict)
	t.Cleanup(func() { _ = l.Close() })
	var held []net.Conn
	for range 3 {
		dialFrom(t, l, "127.0.0.2")
		c, err := l.Accept()
		require.NoError(t, err)
		held = append(held, c)
	}
	return l, held
}

// TestConnListenerWaitingPlacesAreShared: with every place held by
// requests in flight and every waiting place taken, all by one address, a
// connection of another address takes the waiting place of one of the
// first's, instead of being closed at once: one client holding twice
// max_connections cannot lock the others out. It goes first once a place
// frees.
func TestConnListenerWaitingPlacesAreShared(t *testing.T) {
	var evicted evictions
	l, held := fullFromOneAddress(t, evicted.record)
	for _, c := range held {
		l.ConnState(c, http.StateActive)
	}
	var queued []net.Conn
	for i := range 3 {
		queued = append(queued, dialFrom(t, l, "127.0.0.2"))
		waitWaiting(t, l, i+1)
	}

	dialFrom(t, l, "127.0.0.3")
	// The newest waiting connection of 127.0.0.2 gives its place: bounded,
	// a connection left open would block the read for good.
	_ = queued[2].SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := queued[2].Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the newest waiting connection of the address holding the most was closed")

	require.NoError(t, held[0].Close())
	next, err := l.Accept()
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.3", next.RemoteAddr().(*net.TCPAddr).IP.String(),
		"the newcomer waited and goes first")
	assert.Equal(t, []string{EvictedWaiting + " 127.0.0.2"}, evicted.list())
	assertWaitingCounted(t, l)
}

// assertWaitingCounted checks the per-address counts of the waiting
// connections, kept as they change, against the connections waiting.
func assertWaitingCounted(t *testing.T, l *ConnListener) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	want := map[netip.Addr]int{}
	for _, c := range l.waiting {
		want[c.addr]++
	}
	assert.Equal(t, want, l.waitingBy)
}
