// Command canon benchmarks `sandboxaudit canon` against the Python
// reference stand-in (bench/canon/reference.py) on the same file of
// HttpProxySink bodies, alternating the two, and checks that both write the
// same bytes. It compares process with process (wall and CPU, start-up
// included) and loop with loop (the stand-in's own loop time against
// canon's wall time less its time on no input).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	var (
		cli    = flag.String("cli", "bin/sandboxaudit", "sandboxaudit CLI binary")
		python = flag.String("python", "python3", "Python interpreter with pydantic 2")
		ref    = flag.String("reference", "bench/canon/reference.py", "the Python stand-in")
		events = flag.Int("events", 100_000, "events in the input file")
		rounds = flag.Int("rounds", 3, "alternations")
		save   = flag.String("save-input", "", "only write the generated input to this file (for profiling)")
	)
	flag.Parse()
	if *save != "" {
		if err := os.WriteFile(*save, bodies(*events), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "canon bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(context.Background(), *cli, *python, *ref, *events, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "canon bench:", err)
		os.Exit(1)
	}
}

// timing is one run of one command.
type timing struct {
	wall, cpu time.Duration
	loop      time.Duration // the Python loop alone, as the stand-in reports it
	out       []byte
}

// command is one command the bench times.
type command struct {
	name string
	argv []string
}

func run(ctx context.Context, cli, python, ref string, n, rounds int) error {
	if n <= 0 || rounds <= 0 {
		return errors.New("events and rounds must be > 0")
	}
	dir, err := os.MkdirTemp("", "sandboxaudit-canon-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "bodies.jsonl")
	if err := writeInput(in, n); err != nil {
		return err
	}
	fmt.Printf("%-5s %-20s %8s %8s %8s %11s\n", "round", "command", "wall s", "CPU s", "loop s", "events/s")

	cmds := []command{
		{"sandboxaudit canon", []string{cli, "canon"}},
		{"python stand-in", []string{python, ref}},
	}
	res := results{walls: make([][]float64, len(cmds)), cpus: make([][]float64, len(cmds))}
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		return err
	}
	for r := 1; r <= rounds; r++ {
		if err := res.round(ctx, r, cmds, in, empty, n); err != nil {
			return err
		}
	}
	if err := res.checkOutputs(n); err != nil {
		return err
	}
	res.report(n)
	return nil
}

// writeInput writes n HttpProxySink bodies to in and says what it holds.
func writeInput(in string, n int) error {
	body := bodies(n)
	if err := os.WriteFile(in, body, 0o600); err != nil {
		return err
	}
	fmt.Printf("input: %d HttpProxySink bodies, %.1f MB; %d CPUs\n", n, float64(len(body))/1e6, runtime.NumCPU())
	return nil
}

// results are the rounds' timings, indexed by command as cmds is (canon
// first), and the first round's outputs.
type results struct {
	walls, cpus    [][]float64
	loops, empties []float64
	outs           [][]byte
}

// round r times canon on no input, then each command on in (n events).
func (res *results) round(ctx context.Context, r int, cmds []command, in, empty string, n int) error {
	// canon on no input: its start-up and exit, to take out of its
	// wall time for the loop-with-loop comparison.
	e, err := timeCommand(ctx, cmds[0].argv, empty)
	if err != nil {
		return fmt.Errorf("%s on no input: %w", cmds[0].name, err)
	}
	res.empties = append(res.empties, e.wall.Seconds())
	for i, c := range cmds {
		t, err := timeCommand(ctx, c.argv, in)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		res.walls[i] = append(res.walls[i], t.wall.Seconds())
		res.cpus[i] = append(res.cpus[i], t.cpu.Seconds())
		loop := "-"
		if t.loop > 0 {
			res.loops = append(res.loops, t.loop.Seconds())
			loop = fmt.Sprintf("%.3f", t.loop.Seconds())
		}
		fmt.Printf("%-5d %-20s %8.3f %8.3f %8s %11.0f\n", r, c.name, t.wall.Seconds(), t.cpu.Seconds(), loop, float64(n)/t.wall.Seconds())
		if r == 1 {
			res.outs = append(res.outs, t.out)
		}
	}
	return nil
}

// checkOutputs checks that both commands wrote the same n lines.
func (res *results) checkOutputs(n int) error {
	outs := res.outs
	if !bytes.Equal(outs[0], outs[1]) {
		return fmt.Errorf("outputs differ (%d vs %d bytes): %s", len(outs[0]), len(outs[1]), firstDiff(outs[0], outs[1]))
	}
	if got := bytes.Count(outs[0], []byte{'\n'}); got != n {
		return fmt.Errorf("%d output lines, want %d", got, n)
	}
	return nil
}

// report prints the medians: process with process, then loop with loop
// when the stand-in reported its loop time.
func (res *results) report(n int) {
	ours, py := median(res.walls[0]), median(res.walls[1])
	fmt.Printf("\noutputs identical (%d lines)\n", n)
	fmt.Printf("process with process, wall: canon %.3f s (%.0f events/s), python %.3f s (%.0f events/s); ratio %.1fx\n",
		ours, float64(n)/ours, py, float64(n)/py, py/ours)
	fmt.Printf("process with process, CPU:  canon %.3f s, python %.3f s; ratio %.1fx\n", median(res.cpus[0]), median(res.cpus[1]), median(res.cpus[1])/median(res.cpus[0]))
	if len(res.loops) > 0 {
		pl, start := median(res.loops), median(res.empties)
		fmt.Printf("loop with loop: python's loop alone (no interpreter start, no imports) %.3f s; canon %.3f s less its %.3f s on no input = %.3f s; ratio %.1fx\n",
			pl, ours, start, ours-start, pl/(ours-start))
	}
}

func timeCommand(ctx context.Context, argv []string, input string) (timing, error) {
	f, err := os.Open(input)
	if err != nil {
		return timing{}, err
	}
	defer f.Close()
	// Output goes to a file, as `canon < in > out` does for a user: a pipe
	// into this process would charge both commands for our copy loop,
	// which competes with them for the same cores.
	out, err := os.CreateTemp("", "bench-canon-out-*")
	if err != nil {
		return timing{}, err
	}
	defer func() { _ = os.Remove(out.Name()) }()
	defer out.Close()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = f, out, &stderr
	cmd.Env = append(os.Environ(), "BENCH_LOOP_TIME=1")
	began := time.Now()
	if err := cmd.Run(); err != nil {
		return timing{}, fmt.Errorf("%w: %s", err, stderr.String())
	}
	t := timing{wall: time.Since(began)}
	if t.out, err = os.ReadFile(out.Name()); err != nil {
		return timing{}, err
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		t.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if _, v, ok := strings.Cut(stderr.String(), "loop_seconds="); ok {
		if sec, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			t.loop = time.Duration(sec * float64(time.Second))
		}
	}
	return t, nil
}

func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-80)
	return fmt.Sprintf("at byte %d:\n  %q\n  %q", i, a[lo:min(len(a), i+80)], b[lo:min(len(b), i+80)])
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
