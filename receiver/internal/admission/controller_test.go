package admission

import (
	"net/http"
	"net/netip"
	"testing"
)

// Bytes are counted to the peer's IP; an IPv6 peer to its /64, which one
// host can fill with addresses of its own.
func TestClientAddr(t *testing.T) {
	for remote, want := range map[string]string{
		"127.0.0.2:4711":                 "127.0.0.2",
		"[::ffff:10.1.2.3]:80":           "10.1.2.3",
		"[2001:db8:1:2:aaaa::1]:443":     "2001:db8:1:2::",
		"[2001:db8:1:2:ffff:1:2:3]:1234": "2001:db8:1:2::",
		"[2001:db8:1:3::1]:1234":         "2001:db8:1:3::",
	} {
		got := ClientAddr(&http.Request{RemoteAddr: remote})
		if got != netip.MustParseAddr(want) {
			t.Errorf("ClientAddr(%q) = %v, want %s", remote, got, want)
		}
	}
}
