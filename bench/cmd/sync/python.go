package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// runPython runs the stand-in for HttpProxySink(mode="sync",
// on_error="raise") for ops operations against eventsURL. Its client CPU
// is the child process's, interpreter start-up included.
func runPython(ctx context.Context, python, script, eventsURL string, ops int, col *collector) (run, error) {
	cpu0, err := col.col.CPU()
	if err != nil {
		return run{}, err
	}
	cmd := exec.CommandContext(ctx, python, script, eventsURL, strconv.Itoa(ops))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	began := time.Now()
	if err := cmd.Run(); err != nil {
		return run{}, fmt.Errorf("%s: %w\n%s", script, err, stderr.String())
	}
	elapsed := time.Since(began)
	cpu1, err := col.col.CPU()
	if err != nil {
		return run{}, err
	}
	r := run{ops: ops, collectorCPU: cpu1 - cpu0}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.clientCPU = rusageCPU(ru)
	}
	sc := bufio.NewScanner(&stdout)
	var sum time.Duration
	for sc.Scan() {
		ns, err := strconv.ParseInt(sc.Text(), 10, 64)
		if err != nil {
			return run{}, fmt.Errorf("%s: line %q: %w", script, sc.Text(), err)
		}
		r.durations = append(r.durations, time.Duration(ns))
		sum += time.Duration(ns)
	}
	if len(r.durations) != ops {
		return run{}, fmt.Errorf("%s: %d durations, want %d", script, len(r.durations), ops)
	}
	// The load time is the operations' own: interpreter start-up is not
	// part of an operation.
	r.elapsed = min(sum, elapsed)
	return r, nil
}

func rusageCPU(ru *syscall.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
