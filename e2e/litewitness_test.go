package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// litewitness is a running torchwood litewitness (a real C2SP
// tlog-witness), signing through its own ssh-agent, on loopback.
type litewitness struct {
	addr string
	vkey string
	db   string
	ctl  string // the witnessctl binary
	log  string
	cmd  *exec.Cmd
	done chan struct{}
}

// witnessTool finds litewitness or witnessctl: $SANDBOXAUDIT_<NAME> (upper
// case), then PATH, then $HOME/go/bin (where .ci/run installs them). A
// missing tool skips the test, except under CI, where it fails.
func witnessTool(t testing.TB, name string) string {
	t.Helper()
	if p := os.Getenv("SANDBOXAUDIT_" + strings.ToUpper(name)); p != "" {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		if p := filepath.Join(home, "go", "bin", name); fileExists(p) {
			return p
		}
	}
	msg := name + " not found (install it with: go install filippo.io/torchwood/cmd/" + name + "@v0.10.0)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// startLitewitness makes an ed25519 key with ssh-keygen, loads it into a
// dedicated ssh-agent and starts litewitness named name on a free
// loopback port. Cleanup stops both.
func startLitewitness(t testing.TB, name string) *litewitness {
	t.Helper()
	lw, ctl := witnessTool(t, "litewitness"), witnessTool(t, "witnessctl")
	for _, tool := range []string{"ssh-keygen", "ssh-agent", "ssh-add"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s not found (Debian package openssh-client)", tool)
			}
			t.Skipf("%s not found (Debian package openssh-client)", tool)
		}
	}
	// A short directory: a unix socket path is limited to about 100 bytes.
	dir, err := os.MkdirTemp("", "lw")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	key := filepath.Join(dir, "witness_key")
	runTool(t, nil, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "e2e-witness", "-f", key)
	fp := strings.Fields(runTool(t, nil, "ssh-keygen", "-l", "-f", key+".pub"))
	require.GreaterOrEqual(t, len(fp), 2)

	sock := filepath.Join(dir, "agent.sock")
	agent := exec.Command("ssh-agent", "-D", "-a", sock)
	require.NoError(t, agent.Start())
	agentDone := make(chan struct{})
	go func() { _ = agent.Wait(); close(agentDone) }()
	t.Cleanup(func() { _ = agent.Process.Kill(); <-agentDone })
	waitFor(t, "ssh-agent socket", func() bool { return fileExists(sock) })
	runTool(t, []string{"SSH_AUTH_SOCK=" + sock}, "ssh-add", "-q", key)

	w := &litewitness{addr: freeAddr(t), db: filepath.Join(dir, "witness.db"), ctl: ctl, log: filepath.Join(dir, "litewitness.log"), done: make(chan struct{})}
	logFile, err := os.Create(w.log)
	require.NoError(t, err)
	defer func() { _ = logFile.Close() }()
	w.cmd = exec.Command(lw, "-name", name, "-db", w.db, "-ssh-agent", sock, "-key", fp[1], "-listen", w.addr)
	w.cmd.Stdout, w.cmd.Stderr = logFile, logFile
	require.NoError(t, w.cmd.Start())
	go func() { _ = w.cmd.Wait(); close(w.done) }()
	t.Cleanup(func() {
		_ = w.cmd.Process.Kill()
		<-w.done
		if t.Failed() {
			b, _ := os.ReadFile(w.log)
			t.Logf("litewitness log:\n%s", tail(b, 4000))
		}
	})
	vkeyRE := regexp.MustCompile(`vkey=(\S+)`)
	waitFor(t, "litewitness's verifier key", func() bool {
		b, _ := os.ReadFile(w.log)
		if m := vkeyRE.FindSubmatch(b); m != nil {
			w.vkey = strings.Trim(string(m[1]), `"`)
			return true
		}
		select {
		case <-w.done:
			t.Fatalf("litewitness exited:\n%s", b)
		default:
		}
		return false
	})
	waitFor(t, "litewitness listening", func() bool { return dialable(w.addr) })
	return w
}

// addLog registers a log origin and its note verifier key (a .pub file's
// text) with witnessctl, as an operator would.
func (w *litewitness) addLog(t testing.TB, origin, pubPath string) {
	t.Helper()
	vkey := strings.TrimSpace(string(mustRead(t, pubPath)))
	runTool(t, nil, w.ctl, "add-log", "-db", w.db, "-origin", origin)
	runTool(t, nil, w.ctl, "add-key", "-db", w.db, "-origin", origin, "-key", vkey)
}

// size is the tree size the witness last cosigned for origin.
func (w *litewitness) size(t *testing.T, origin string) int64 {
	t.Helper()
	out := runTool(t, nil, w.ctl, "list-logs", "-db", w.db)
	for line := range strings.Lines(out) {
		var l struct {
			Origin string `json:"origin"`
			Size   int64  `json:"size"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Origin == origin {
			return l.Size
		}
	}
	t.Fatalf("witness does not list %q:\n%s", origin, out)
	return 0
}

// waitSize waits until the witness has cosigned origin at size n.
func (w *litewitness) waitSize(t *testing.T, origin string, n int64) {
	t.Helper()
	waitFor(t, "the witness to cosign the checkpoint", func() bool { return w.size(t, origin) == n })
}

func runTool(t testing.TB, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deliveryTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Run(), "%s %v:\n%s", name, args, out.String())
	return out.String()
}

func waitFor(t testing.TB, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(deliveryTimeout)
	for !ok() {
		require.True(t, time.Now().Before(deadline), "timed out waiting for %s", what)
		time.Sleep(pollInterval)
	}
}

func dialable(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}
