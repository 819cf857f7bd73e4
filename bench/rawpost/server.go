package rawpost

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"
)

// ServeEnv, set in a process's environment, makes MaybeServe serve.
const ServeEnv = "RAWPOST_BARE_SERVER"

// Bare is a net/http server on 127.0.0.1 whose handler reads the body and
// answers 200.
type Bare struct {
	URL string
	srv *http.Server
}

// StartBare starts a Bare server in this process.
func StartBare() (*Bare, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{ReadHeaderTimeout: time.Minute, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	})}
	go func() { _ = srv.Serve(ln) }()
	return &Bare{URL: "http://" + ln.Addr().String() + "/", srv: srv}, nil
}

// Close stops the server.
func (b *Bare) Close() error { return b.srv.Close() }

// MaybeServe, called first in main (or TestMain), serves a Bare server and
// exits when ServeEnv is set: it prints the URL and serves until stdin
// closes. Otherwise it returns at once.
func MaybeServe() {
	if os.Getenv(ServeEnv) == "" {
		return
	}
	b, err := StartBare()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(b.URL)
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = b.Close()
	os.Exit(0)
}

// Process is a Bare server in a child process.
type Process struct {
	URL   string
	cmd   *exec.Cmd
	stdin io.Closer
}

// StartProcess runs this executable again as a Bare server (its main must
// call MaybeServe first) and returns once it listens.
func StartProcess() (*Process, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), ServeEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, stdin: stdin}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return nil, errors.Join(fmt.Errorf("bare server process: %w", err), p.Close())
	}
	p.URL = strings.TrimSpace(line)
	return p, nil
}

// Close stops the child process and waits for it.
func (p *Process) Close() error {
	_ = p.stdin.Close()
	return p.cmd.Wait()
}
