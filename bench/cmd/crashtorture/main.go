// Command crashtorture SIGKILLs a running collector at random moments
// while clients post events, restarts it, and in the end checks the
// product's crash promises: every acknowledged event is in the trail
// (or, with an HTTP sink, at the downstream collector), every line is
// whole, a line a kill cut short is kept aside (.torn-) and is the start of
// a batch resent whole, every duplicate is an exact copy, every .zst reads with
// `zstd -d`, and `sandboxaudit verify --key` passes, with `--strict` too.
//
// The file sink rotates at 1 MB, compresses with zstd and seals every
// 200 ms; a quarter of the restarts are killed again while they start.
// With -mode http the edge's HTTP sink spools for a downstream collector,
// which is killed every third round instead of the edge.
//
//	make build && cd bench
//	go run ./cmd/crashtorture -bin ../bin -mode file -rounds 40
//	go run ./cmd/crashtorture -bin ../bin -mode file -rounds 40 -max-backups 3
//	go run ./cmd/crashtorture -bin ../bin -mode http -rounds 40 -pause 100ms
//
// It is too slow for CI (minutes per configuration); the e2e tests kill at
// chosen points instead.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

type options struct {
	bin, dir, mode   string
	rounds, clients  int
	maxBackups       int
	budget, maxDelay time.Duration
	pause            time.Duration
	snapshots        bool
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "bin", "directory holding otelcol-sandboxaudit and sandboxaudit")
	flag.StringVar(&o.dir, "dir", "", "work directory (default: a new temporary one)")
	flag.StringVar(&o.mode, "mode", "file", "file (file sink, rotation, zstd, integrity) or http (HTTP sink with spool to a downstream collector)")
	flag.IntVar(&o.rounds, "rounds", 40, "kill rounds")
	flag.IntVar(&o.clients, "clients", 4, "concurrent clients")
	flag.IntVar(&o.maxBackups, "max-backups", 0, "file.rotation.max_backups (0: keep all; >0 lets retention remove acknowledged events, which are then only counted)")
	flag.DurationVar(&o.budget, "budget", 10*time.Minute, "bound on the whole run")
	flag.DurationVar(&o.maxDelay, "max-delay", 2*time.Second, "longest random wait before each kill")
	flag.DurationVar(&o.pause, "pause", 0, "each client's pause between batches (an HTTP downstream must keep up for the spool to drain)")
	flag.BoolVar(&o.snapshots, "snapshots", false, "copy each killed collector's directory before its restart (the last three are kept), to replay a failed start")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("PASS")
}

func run(o options) error {
	var err error
	if o.bin, err = filepath.Abs(o.bin); err != nil {
		return err
	}
	if o.dir == "" {
		if o.dir, err = os.MkdirTemp("", "crashtorture-"); err != nil {
			return err
		}
	}
	fmt.Println("work directory:", o.dir)
	ctx, cancel := context.WithTimeout(context.Background(), o.budget)
	defer cancel()
	keys := filepath.Join(o.dir, "keys")
	if out, err := exec.Command(filepath.Join(o.bin, "sandboxaudit"), "keygen", "--name", "torture", "--out", keys).CombinedOutput(); err != nil {
		return fmt.Errorf("keygen: %w: %s", err, out)
	}
	t := &torture{o: o, key: filepath.Join(keys, "torture.key"), pub: filepath.Join(keys, "torture.pub")}
	return t.run(ctx)
}

type torture struct {
	o        options
	key, pub string
	mu       sync.Mutex
	acked    map[string]string // event id → line sent (before canonicalisation)
	nextB    atomic.Int64
}

// proc is one collector process.
type proc struct {
	name, cfg, addr, dir string
	cmd                  *exec.Cmd
	done                 chan struct{}
	starts               int
	// startWait bounds the wait for it to listen (default a minute): a
	// start seals what the last run left unsealed first.
	startWait time.Duration
}

func (t *torture) start(ctx context.Context, p *proc) error {
	if err := t.spawn(p); err != nil {
		return err
	}
	return t.waitListening(ctx, p)
}

// spawn starts p without waiting for it to listen.
func (t *torture) spawn(p *proc) error {
	p.starts++
	logf, err := os.OpenFile(filepath.Join(p.dir, p.name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	fmt.Fprintf(logf, "\n===== start %d at %s =====\n", p.starts, time.Now().UTC().Format(time.RFC3339Nano))
	cmd := exec.Command(filepath.Join(t.o.bin, "otelcol-sandboxaudit"), "--config", p.cfg)
	cmd.Dir = p.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); _ = logf.Close(); close(done) }()
	p.cmd, p.done = cmd, done
	return nil
}

func (t *torture) waitListening(ctx context.Context, p *proc) error {
	cmd, done := p.cmd, p.done
	wait := p.startWait
	if wait == 0 {
		wait = time.Minute
	}
	deadline := time.Now().Add(wait)
	for {
		select {
		case <-done:
			return fmt.Errorf("%s exited at start %d (%s); see %s.log", p.name, p.starts, cmd.ProcessState, filepath.Join(p.dir, p.name))
		default:
		}
		if c, err := net.DialTimeout("tcp", p.addr, time.Second); err == nil {
			_ = c.Close()
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			_ = cmd.Process.Kill()
			<-done
			return fmt.Errorf("%s did not listen on %s within %s", p.name, p.addr, wait)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (t *torture) kill(p *proc) {
	_ = p.cmd.Process.Kill()
	<-p.done
}

func (t *torture) stop(p *proc) error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(40 * time.Second):
		t.kill(p)
		return fmt.Errorf("%s did not stop within 40 s of SIGTERM", p.name)
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		return fmt.Errorf("%s exited %d on SIGTERM", p.name, code)
	}
	return nil
}

func freeAddr() (string, error) {
	for range 50 {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(40000))
		l, err := net.Listen("tcp", addr)
		if err == nil {
			_ = l.Close()
			return addr, nil
		}
	}
	return "", errors.New("no free port")
}

const pipelines = `service:
  telemetry: {metrics: {level: none}}
  pipelines:
    logs: {receivers: [sandboxaudit], exporters: [sandboxaudit]}
`

func (t *torture) fileSink(path string) string {
	return fmt.Sprintf(`    file:
      path: %s
      fsync: batch
      rotation: {max_megabytes: 1, max_backups: %d, compression: zstd}
      integrity: {signing_key_file: %s, checkpoint_interval: 200ms}
`, path, t.o.maxBackups, t.key)
}

// topology is a run's collectors (central only with -mode http), and
// where the trail and the edge's spool are.
type topology struct {
	edge, central *proc
	audit, spool  string
}

func (t *torture) run(ctx context.Context) error {
	t.acked = map[string]string{}
	top, err := t.configure()
	if err != nil {
		return err
	}
	defer t.killAll(top.edge, top.central) // whatever failed, no collector outlives the run
	if top.central != nil {
		if err := t.start(ctx, top.central); err != nil {
			return err
		}
	}
	if err := t.start(ctx, top.edge); err != nil {
		return err
	}

	loadCtx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for c := range t.o.clients {
		wg.Add(1)
		go func() { defer wg.Done(); t.client(loadCtx, c, top.edge.addr) }()
	}
	roundErr := t.rounds(ctx, top.edge, top.central)
	stopLoad()
	wg.Wait()
	if roundErr != nil {
		return roundErr
	}
	if top.central != nil {
		if err := waitDrained(ctx, top.spool); err != nil {
			return err
		}
	}
	stopErrs, err := t.stopAll(top.edge, top.central)
	if err != nil {
		return err
	}
	return errors.Join(t.check(top.audit), errors.Join(stopErrs...))
}

// configure picks the collectors' addresses and writes their
// configurations: with -mode http, the edge's HTTP sink spools for a
// central collector that writes the trail.
func (t *torture) configure() (topology, error) {
	edgeAddr, err := freeAddr()
	if err != nil {
		return topology{}, err
	}
	top := topology{
		edge:  &proc{name: "edge", addr: edgeAddr, dir: filepath.Join(t.o.dir, "edge")},
		audit: filepath.Join(t.o.dir, "edge", "audit", "events.jsonl"),
		spool: filepath.Join(t.o.dir, "edge", "spool", "spool.jsonl"),
	}
	exporter := t.fileSink(top.audit)
	if t.o.mode == "http" {
		if exporter, err = t.configureCentral(&top); err != nil {
			return topology{}, err
		}
	} else if t.o.mode != "file" {
		return topology{}, fmt.Errorf("-mode %q: want file or http", t.o.mode)
	}
	top.edge.cfg = filepath.Join(top.edge.dir, "config.yaml")
	if err := writeConfig(top.edge.cfg, edgeAddr, exporter); err != nil {
		return topology{}, err
	}
	return top, nil
}

// configureCentral writes the central collector's configuration, moves
// the trail there, and returns the edge's exporter that spools for it.
func (t *torture) configureCentral(top *topology) (string, error) {
	centralAddr, err := freeAddr()
	if err != nil {
		return "", err
	}
	central := &proc{name: "central", addr: centralAddr, dir: filepath.Join(t.o.dir, "central")}
	top.central = central
	top.audit = filepath.Join(central.dir, "audit", "events.jsonl")
	central.cfg = filepath.Join(central.dir, "config.yaml")
	if err := writeConfig(central.cfg, centralAddr, t.fileSink(top.audit)); err != nil {
		return "", err
	}
	return fmt.Sprintf(`    timeout: 5s
    retry_on_failure: {enabled: true, initial_interval: 50ms, max_interval: 200ms, max_elapsed_time: 1s}
    http:
      endpoint: http://%s/v1/sandbox/events
      spool: {path: %s, replay_interval: 100ms}
`, centralAddr, top.spool), nil
}

// killAll kills each collector still running.
func (t *torture) killAll(procs ...*proc) {
	for _, p := range procs {
		if p != nil && p.cmd != nil {
			select {
			case <-p.done:
			default:
				t.kill(p)
			}
		}
	}
}

// rounds runs the kill rounds while the clients post, until -rounds or
// the budget ends.
func (t *torture) rounds(ctx context.Context, edge, central *proc) error {
	for r := range t.o.rounds {
		if ctx.Err() != nil {
			return fmt.Errorf("budget spent after %d rounds", r)
		}
		if err := t.round(ctx, r, edge, central); err != nil {
			return err
		}
	}
	return nil
}

// round kills a collector at a random moment (central every third round,
// when there is one) and starts it again, a quarter of the time after
// killing it once more while it starts.
func (t *torture) round(ctx context.Context, r int, edge, central *proc) error {
	time.Sleep(time.Duration(rand.Int64N(int64(t.o.maxDelay) + 1)))
	victim := edge
	if central != nil && r%3 == 2 {
		victim = central // the downstream dies too: the edge spools, then replays
	}
	t.kill(victim)
	t.mu.Lock()
	n := len(t.acked)
	t.mu.Unlock()
	fmt.Printf("round %d: killed %s; %d events acknowledged\n", r+1, victim.name, n)
	if central != nil && victim == central && rand.IntN(2) == 0 {
		// Keep it down a while so that the edge spools.
		time.Sleep(time.Duration(rand.Int64N(int64(t.o.maxDelay) + 1)))
	}
	if t.o.snapshots {
		snapshot(victim.dir, r)
	}
	if rand.IntN(4) == 0 {
		// Kill it again while it starts: the checks and repairs at
		// start (store, compression left over, torn tails) must
		// survive a kill too.
		if err := t.spawn(victim); err != nil {
			return err
		}
		time.Sleep(time.Duration(rand.Int64N(int64(time.Second))))
		t.kill(victim)
		fmt.Printf("round %d: killed %s again while it started\n", r+1, victim.name)
	}
	if err := t.start(ctx, victim); err != nil {
		return fmt.Errorf("round %d: %w", r+1, err)
	}
	return nil
}

// stopAll stops each collector with SIGTERM. A stop that fails is
// returned in stopErrs, after one more start and stop; err is a failure
// of that start.
func (t *torture) stopAll(procs ...*proc) (stopErrs []error, err error) {
	for _, p := range procs {
		if p == nil {
			continue
		}
		if err := t.stop(p); err != nil {
			// A shutdown past its 30 s ends with exit 1 and leaves lines
			// unsealed; the next start seals them. Do that, so that the
			// check sees what a restart leaves, and report the stop.
			stopErrs = append(stopErrs, err)
			fmt.Println("note:", err, "- starting it once more to seal what it left")
			p.startWait = 10 * time.Minute
			if err := t.start(context.Background(), p); err != nil {
				return nil, err
			}
			stopErrs = append(stopErrs, t.stop(p))
		}
	}
	return stopErrs, nil
}

// snapshot copies dir to dir.snap-<round>, removing the one three rounds
// older.
func snapshot(dir string, round int) {
	_ = os.RemoveAll(fmt.Sprintf("%s.snap-%d", dir, round-3))
	if out, err := exec.Command("cp", "-a", dir, fmt.Sprintf("%s.snap-%d", dir, round)).CombinedOutput(); err != nil {
		fmt.Printf("snapshot of %s: %v: %s\n", dir, err, out)
	}
}

func writeConfig(path, addr, exporter string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	cfg := fmt.Sprintf("receivers:\n  sandboxaudit:\n    endpoint: %s\nexporters:\n  sandboxaudit:\n%s%s", addr, exporter, pipelines)
	return os.WriteFile(path, []byte(cfg), 0o600)
}

// waitDrained waits until the spool's offset sidecar says everything was
// acknowledged downstream.
func waitDrained(ctx context.Context, spool string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st, err := os.Stat(spool)
		if err == nil && st.Size() == 0 {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("spool %s not drained within 2 min", spool)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// client posts batches until ctx ends, resending each until it is
// acknowledged (as the Python sink does), and records what was.
func (t *torture) client(ctx context.Context, c int, addr string) {
	hc := &http.Client{Timeout: 10 * time.Second}
	for ctx.Err() == nil {
		b := int(t.nextB.Add(1))
		body, lines := batch(b, c, 10+rand.IntN(60))
		for {
			req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/sandbox/events", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/x-ndjson")
			resp, err := hc.Do(req)
			if err == nil {
				_ = resp.Body.Close()
				if resp.StatusCode/100 == 2 {
					break
				}
			}
			if ctx.Err() != nil {
				// A batch never acknowledged may or may not be written;
				// it is not counted.
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(t.o.pause)
		t.mu.Lock()
		for id, l := range lines {
			t.acked[id] = l
		}
		t.mu.Unlock()
	}
}

// batch is batch b of client c: n operations, a start and a finish each,
// in a session of its own, with a path long enough that a 1 MB segment
// fills within seconds.
func batch(b, c, n int) ([]byte, map[string]string) {
	session := fmt.Sprintf("00000000-%04d-4000-8000-%012d", c, b)
	pad := strings.Repeat("x", 300)
	var buf bytes.Buffer
	lines := map[string]string{}
	for op := range n {
		for _, phase := range []string{"start", "finish"} {
			seq := 2*op + 1
			extra := ""
			if phase == "finish" {
				seq++
				extra = `,"ok":true,"duration_ms":1.5,"error_code":null,"error_type":null,"error_message":null,"error_retryable":null,"stdout":null,"stderr":null`
			}
			id := fmt.Sprintf("%08d-%04d-4000-8000-%012d", b, c, seq)
			l := fmt.Sprintf(`{"version":1,"event_id":"%s","ts":"2026-03-14T15:09:26.5Z","session_id":"%s","seq":%d,"op":"read","phase":"%s","span_id":"op%d","parent_span_id":null,"trace_id":null,"data":{"path":"/w/%d/%s"}%s}`,
				id, session, seq, phase, op, op, pad, extra)
			lines[id] = l
			buf.WriteString(l + "\n")
		}
	}
	return buf.Bytes(), lines
}

var eventIDPattern = regexp.MustCompile(`^\{.*"event_id":"([0-9a-f-]{36})".*\}$`)

// check reads every file of the trail of audit and checks the promises.
func (t *torture) check(audit string) error {
	dir := filepath.Dir(audit)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	sc := trailScan{seen: map[string]string{}, where: map[string]string{}}
	base := strings.TrimSuffix(filepath.Base(audit), ".jsonl")
	for _, e := range ents {
		if err := sc.readFile(dir, e.Name(), base); err != nil {
			return err
		}
	}
	problems := append(sc.problems, checkFragments(sc.fragments, sc.seen)...)
	problems = append(problems, t.checkAcked(&sc)...)
	problems = append(problems, t.verify(dir)...)
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// trailScan is what check read of the trail's files.
type trailScan struct {
	seen               map[string]string // event id → its line
	where              map[string]string // event id → file:line where it was first seen
	dups, lines, files int
	fragments          []fragment
	problems           []string
}

// readFile reads the trail's file name (its name starting with base) in
// dir: a .torn- fragment, or a segment, .zst ones through `zstd -d`.
func (sc *trailScan) readFile(dir, name, base string) error {
	if strings.HasPrefix(name, base) && strings.Contains(name, fsutil.TornSuffix) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		sc.fragments = append(sc.fragments, fragment{name, string(b)})
		return nil
	}
	if !strings.HasPrefix(name, base) || !(strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".jsonl.zst")) {
		return nil
	}
	path := filepath.Join(dir, name)
	var raw []byte
	var err error
	if strings.HasSuffix(name, ".zst") {
		out, err := exec.Command("zstd", "-dc", path).Output()
		if err != nil {
			sc.problems = append(sc.problems, fmt.Sprintf("zstd -d %s: %v", name, err))
			return nil
		}
		raw = out
	} else if raw, err = os.ReadFile(path); err != nil {
		return err
	}
	sc.files++
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		sc.problems = append(sc.problems, fmt.Sprintf("%s ends in a torn line", name))
	}
	sc.scanLines(name, raw)
	return nil
}

// scanLines checks each line of file name (raw) is an event, and each
// duplicate an exact copy of the line first seen.
func (sc *trailScan) scanLines(name string, raw []byte) {
	for i, l := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		if l == "" && len(raw) == 0 {
			continue
		}
		sc.lines++
		m := eventIDPattern.FindStringSubmatch(l)
		if m == nil {
			sc.problems = append(sc.problems, fmt.Sprintf("%s:%d: a line that is not an event (%d bytes)", name, i+1, len(l)))
			continue
		}
		if prev, ok := sc.seen[m[1]]; ok {
			sc.dups++
			if prev != l {
				sc.problems = append(sc.problems, fmt.Sprintf("%s:%d: duplicate of %s (%s) is not an exact copy", name, i+1, m[1], sc.where[m[1]]))
			}
			continue
		}
		sc.seen[m[1]] = l
		sc.where[m[1]] = fmt.Sprintf("%s:%d", name, i+1)
	}
}

// checkAcked prints the scan's counts and reports acknowledged events the
// trail lacks (only noted with retention on, which may remove them).
func (t *torture) checkAcked(sc *trailScan) []string {
	var lost []string
	for id := range t.acked {
		if _, ok := sc.seen[id]; !ok {
			lost = append(lost, id)
		}
	}
	sort.Strings(lost)
	fmt.Printf("check: %d files, %d lines, %d acknowledged events, %d duplicates, %d missing\n", sc.files, sc.lines, len(t.acked), sc.dups, len(lost))
	if len(lost) == 0 {
		return nil
	}
	msg := fmt.Sprintf("%d acknowledged events missing, first %s", len(lost), lost[0])
	if t.o.maxBackups > 0 {
		fmt.Println("note (retention on):", msg)
		return nil
	}
	return []string{msg}
}

// verify runs `sandboxaudit verify --key` on dir, with --strict too.
func (t *torture) verify(dir string) []string {
	var problems []string
	for _, args := range [][]string{
		{"verify", "--key", t.pub, "--allow-duplicates", dir},
		{"verify", "--key", t.pub, "--allow-duplicates", "--strict", dir},
	} {
		out, err := exec.Command(filepath.Join(t.o.bin, "sandboxaudit"), args...).CombinedOutput()
		fmt.Printf("sandboxaudit %s:\n%s", strings.Join(args[3:], " "), lastLines(string(out), 4))
		if err != nil {
			problems = append(problems, fmt.Sprintf("sandboxaudit %s: %v\n%s", strings.Join(args, " "), err, lastLines(string(out), 30)))
		}
	}
	return problems
}

// fragment is a torn last line cut off the trail and kept in a .torn- file
// beside it: the start of a line of a batch a SIGKILL cut short
// (docs/guarantees.md).
type fragment struct{ at, text string }

// checkFragments reports each fragment that is not the start of a line
// the trail holds whole (the batch's resent copy): anything else is damage.
func checkFragments(fragments []fragment, whole map[string]string) []string {
	var problems []string
	for _, f := range fragments {
		found := false
		for _, l := range whole {
			if strings.HasPrefix(l, f.text) {
				found = true
				break
			}
		}
		if !found {
			problems = append(problems, fmt.Sprintf("%s: not the start of an event the trail holds (%d bytes)", f.at, len(f.text)))
		} else {
			fmt.Printf("note: %s: the first %d bytes of a line a kill cut short, kept aside (its batch was resent whole)\n", f.at, len(f.text))
		}
	}
	return problems
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n") + "\n"
}
