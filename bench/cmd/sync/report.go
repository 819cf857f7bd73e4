package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sandboxaudit/sandboxaudit/bench/stats"
)

// run is one measurement: per-operation durations, the load time, and the
// CPU the client and the collector used for it.
type run struct {
	name                    string
	ops                     int
	durations               []time.Duration
	elapsed                 time.Duration
	clientCPU, collectorCPU time.Duration
	// idle is the machine's idle share during the run (iowait included):
	// with other work on the machine, a CPU-bound run shows little.
	idle float64
	// probe is the median fdatasync of ~1 KB appends just before the run,
	// back to back; probeIdle the same with a pause before each append.
	probe, probeIdle time.Duration
}

func (r run) pct(p float64) time.Duration {
	d := slices.Clone(r.durations)
	slices.Sort(d)
	return d[min(len(d)-1, int(p*float64(len(d))))]
}

func (r run) p50() float64         { return ms(r.pct(0.50)) }
func (r run) p99() float64         { return ms(r.pct(0.99)) }
func (r run) opsPerSec() float64   { return float64(r.ops) / r.elapsed.Seconds() }
func (r run) clientUS() float64    { return us(r.clientCPU) / float64(r.ops) }
func (r run) collectorUS() float64 { return us(r.collectorCPU) / float64(r.ops) }
func ms(d time.Duration) float64   { return float64(d) / float64(time.Millisecond) }
func us(d time.Duration) float64   { return float64(d) / float64(time.Microsecond) }

func printHeader() {
	fmt.Printf("%-5s %-30s %8s %8s %10s %13s %15s %6s %9s %9s\n", "round", "run/fsync", "p50 ms", "p99 ms", "ops/s", "client µs/op", "collector µs/op", "idle%", "sync ms", "idle sync")
}

func printRow(round int, r run) {
	fmt.Printf("%-5d %-30s %8.3f %8.3f %10.0f %13.1f %15.1f %6.1f %9.3f %9.3f\n", round, r.name, r.p50(), r.p99(), r.opsPerSec(), r.clientUS(), r.collectorUS(), 100*r.idle, ms(r.probe), ms(r.probeIdle))
}

// results are the runs by name, one per round, in round order.
type results map[string][]run

func (res results) add(r run) { res[r.name] = append(res[r.name], r) }

// per is f of each round's runs a and b, in round order.
func (res results) per(a, b string, f func(a, b run) float64) []float64 {
	var out []float64
	for i := range min(len(res[a]), len(res[b])) {
		out = append(out, f(res[a][i], res[b][i]))
	}
	return out
}

func (res results) median(name string, f func(run) float64) float64 {
	var v []float64
	for _, r := range res[name] {
		v = append(v, f(r))
	}
	return stats.Median(v)
}

func (res results) print(c config) {
	many := fmt.Sprintf("×%d", c.sessions)
	fmt.Println()
	fmt.Println("medians over rounds:")
	printHeader()
	for _, s := range steps(c) {
		name := s.name + "/" + s.fsync
		fmt.Printf("%-5s %-30s %8.3f %8.3f %10.0f %13.1f %15.1f %6.1f %9.3f %9.3f\n", "", name,
			res.median(name, run.p50), res.median(name, run.p99), res.median(name, run.opsPerSec),
			res.median(name, run.clientUS), res.median(name, run.collectorUS), res.median(name, func(r run) float64 { return 100 * r.idle }),
			res.median(name, func(r run) float64 { return ms(r.probe) }), res.median(name, func(r run) float64 { return ms(r.probeIdle) }))
	}

	py := "python/batch"
	fmt.Println()
	fmt.Printf("stand-in vs the issue's HttpProxySink figures: p50 %.2f ms (issue 2.3–3.7), p99 %.2f ms (issue 4.1–9.3)\n",
		res.median(py, run.p50), res.median(py, run.p99))
	for _, mode := range []string{"sync", "sync_finish", "sync_finish/direct"} {
		name := mode + "/batch"
		p50 := res.per(name, py, func(a, b run) float64 { return a.p50() / b.p50() })
		p99 := res.per(name, py, func(a, b run) float64 { return a.p99() / b.p99() })
		fmt.Printf("%-12s / python:  p50 %s  p99 %s   (goal for sync_finish ≤ 0.33 at both)\n", mode, span(p50), span(p99))
	}
	for i, mode := range []string{"sync", "sync_finish", "sync_finish/direct"} {
		syncs := float64(min(i+1, 2)) // fdatasyncs an operation waits for
		added := res.per(mode+"/batch", mode+"/never", func(a, b run) float64 { return a.p50() - b.p50() })
		// One fdatasync is the mean of the probes just before the two runs.
		perSync := res.per(mode+"/batch", mode+"/never", func(a, b run) float64 {
			return (a.p50() - b.p50()) / syncs / ((ms(a.probe) + ms(b.probe)) / 2)
		})
		perIdleSync := res.per(mode+"/batch", mode+"/never", func(a, b run) float64 {
			return (a.p50() - b.p50()) / syncs / ((ms(a.probeIdle) + ms(b.probeIdle)) / 2)
		})
		fmt.Printf("%-12s added by fsync batch at p50: %s ms for %g fdatasync(s); per fdatasync waited / one fdatasync: %s, / one after a pause: %s   (goal ≤ 1.5)\n",
			mode, span(added), syncs, span(perSync), span(perIdleSync))
	}
	direct := res.per("sync_finish/direct/batch", "sync_finish/batch", func(a, b run) float64 { return a.p50() / b.p50() })
	directP99 := res.per("sync_finish/direct/batch", "sync_finish/batch", func(a, b run) float64 { return a.p99() / b.p99() })
	fmt.Printf("sync_finish/direct / sync_finish (otlploghttp): p50 %s  p99 %s\n", span(direct), span(directP99))
	for _, mode := range []string{"sync", "sync_finish"} {
		scale := res.per(mode+many+"/batch", mode+"/batch", func(a, b run) float64 { return a.opsPerSec() / b.opsPerSec() })
		fmt.Printf("%-12s %d sessions / 1 session, ops/s: %s   (goal ≥ 10); CPU µs/op client+collector: 1 session %.0f+%.0f, %d sessions %.0f+%.0f\n",
			mode, c.sessions, span(scale),
			res.median(mode+"/batch", run.clientUS), res.median(mode+"/batch", run.collectorUS), c.sessions,
			res.median(mode+many+"/batch", run.clientUS), res.median(mode+many+"/batch", run.collectorUS))
	}
	// The floor of a sync_finish operation: two acknowledged round trips to
	// another process and two fdatasyncs, with nothing else done.
	floor := res.per(bareIdleSteps+"/never", py, func(a, b run) float64 { return (a.p50() + 2*ms(a.probe)) / b.p50() })
	// The same with the syncs as an operation meets them, each after a pause.
	idleFloor := res.per(bareIdleSteps+"/never", py, func(a, b run) float64 { return (a.p50() + 2*ms(a.probeIdle)) / b.p50() })
	collectorHTTP := res.per(postRawSteps+"/never", bareSteps+"/never", func(a, b run) float64 { return 1000 * (a.p50() - b.p50()) / 2 })
	fmt.Printf("floor of sync_finish (bare×2/idle p50 + 2 × fdatasync probe) / python p50: %s; with the probe after a pause: %s   (above 0.33: the goal is out of reach)\n", span(floor), span(idleFloor))
	fmt.Printf("bare×2 p50 %.3f ms (after a pause: %.3f), post×2/raw p50 %.3f ms: the collector's OTLP/HTTP layers add %s µs per request over a bare net/http server\n",
		res.median(bareSteps+"/never", run.p50), res.median(bareIdleSteps+"/never", run.p50), res.median(postRawSteps+"/never", run.p50), span(collectorHTTP))
	fmt.Printf("python CPU µs/op client+collector: %.0f+%.0f (client: the interpreter, start-up included)\n",
		res.median(py, run.clientUS), res.median(py, run.collectorUS))
}

// span is the median of v with its range.
func span(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	s := slices.Clone(v)
	slices.Sort(s)
	var b strings.Builder
	fmt.Fprintf(&b, "%.2f (%.2f–%.2f)", stats.Median(s), s[0], s[len(s)-1])
	return b.String()
}
