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
	durations, cpu, err := runPythonScript(ctx, python, script, eventsURL, ops)
	if err != nil {
		return run{}, err
	}
	cpu1, err := col.col.CPU()
	if err != nil {
		return run{}, err
	}
	r := run{ops: ops, durations: durations, collectorCPU: cpu1 - cpu0, clientCPU: cpu}
	// The load time is the operations' own: interpreter start-up is not
	// part of an operation.
	for _, d := range durations {
		r.elapsed += d
	}
	return r, nil
}

// runPythonScript runs the stand-in and returns its per-operation
// durations and the CPU time the interpreter used.
func runPythonScript(ctx context.Context, python, script, eventsURL string, ops int) ([]time.Duration, time.Duration, error) {
	cmd := exec.CommandContext(ctx, python, script, eventsURL, strconv.Itoa(ops))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, 0, fmt.Errorf("%s: %w\n%s", script, err, stderr.String())
	}
	var cpu time.Duration
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu = rusageCPU(ru)
	}
	var durations []time.Duration
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		ns, err := strconv.ParseInt(sc.Text(), 10, 64)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: line %q: %w", script, sc.Text(), err)
		}
		durations = append(durations, time.Duration(ns))
	}
	if len(durations) != ops {
		return nil, 0, fmt.Errorf("%s: %d durations, want %d", script, len(durations), ops)
	}
	return durations, cpu, nil
}

func rusageCPU(ru *syscall.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
