package cli

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sandboxaudit/sandboxaudit/internal/webview"
)

// A view listening beyond loopback (--allow-remote) is reachable from the
// investigator's own browser too, so a web page elsewhere could rebind
// its name to the view's address and read the trail. It answers to an
// address (the way one reaches it on purpose), localhost, and the names
// given with --allow-host; any other name gets 421.
func TestServeBeyondLoopbackAnswersOnlyToAddressesAndNamesItWasGiven(t *testing.T) {
	assertHostStatuses(t, func(srv *webview.Server) {
		srv.AllowRemoteHosts([]string{"Audit.Example"})
	}, map[string]int{
		"192.0.2.7:8089": http.StatusOK, "192.0.2.7": http.StatusOK, "[2001:db8::7]:8089": http.StatusOK,
		"127.0.0.1:8089": http.StatusOK, "localhost:8089": http.StatusOK,
		"audit.example:8089": http.StatusOK, "AUDIT.EXAMPLE": http.StatusOK,
		"attacker.example:8089": http.StatusMisdirectedRequest, "attacker.example": http.StatusMisdirectedRequest,
		"audit.example.attacker.example": http.StatusMisdirectedRequest,
	})
}

func TestServeAllowHostNeedsAllowRemote(t *testing.T) {
	p := writeFile(t, "events.jsonl", canonLines(op(sessionA, "exec", "x", 1, 2)))
	r := run(t, "", "serve", "--listen", "127.0.0.1:0", "--allow-host", "audit.example", p)
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "--allow-host")
	r = run(t, "", "serve", "--listen", "0.0.0.0:0", "--allow-remote", "--allow-host", "bad name/", p)
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "--allow-host")
}
