package main

import (
	"fmt"
	"time"

	"github.com/sandboxaudit/sandboxaudit/bench/stats"
)

func printHeader() {
	fmt.Printf("%-5s %-12s %-13s %10s %8s %14s %13s %11s %6s %6s %8s %8s\n", "round", "shape", "collector", "spans/s", "CPU-s", "CPU-s/100k sp", "peak RSS MiB", "bytes/span", "idle%", "steal%", "sync ms", "tail ms")
}

func printRow(m measurement) {
	fmt.Printf("%-5d %-12s %-13s %10.0f %8.2f %14.3f %13.1f %11.1f %6.1f %6.1f %8.2f %8.0f\n",
		m.round, m.shape, m.name, m.spansPerSec(), m.cpu.Seconds(), m.cpuPer100k(), float64(m.peakRSS)/(1<<20), m.bytesPerSpan(), 100*m.idle, 100*m.steal, syncMS(m), float64(m.tail)/float64(time.Millisecond))
}

// printSummary gives one shape's medians per collector and the ratios of
// ours to the baseline, per round and of the medians.
func printSummary(shape string, all []measurement, ours, base string) {
	var o, b []measurement
	for _, m := range all {
		switch m.name {
		case ours:
			o = append(o, m)
		case base:
			b = append(b, m)
		}
	}
	var ratios []float64
	for i := range min(len(o), len(b)) {
		ratios = append(ratios, o[i].spansPerSec()/b[i].spansPerSec())
	}
	med := func(ms []measurement, f func(measurement) float64) float64 {
		v := make([]float64, len(ms))
		for i, m := range ms {
			v[i] = f(m)
		}
		return stats.Median(v)
	}
	sps := measurement.spansPerSec
	cpu := measurement.cpuPer100k
	rss := func(m measurement) float64 { return float64(m.peakRSS) / (1 << 20) }
	fmt.Println()
	fmt.Printf("%s shape:\n", shape)
	fmt.Printf("median spans/s:          %s %.0f, %s %.0f; ratio %.2f (per round: %s)\n",
		ours, med(o, sps), base, med(b, sps), med(o, sps)/med(b, sps), fmtRatios(ratios))
	fmt.Printf("median CPU-s/100k spans: %s %.3f, %s %.3f; ratio %.2f\n",
		ours, med(o, cpu), base, med(b, cpu), med(o, cpu)/med(b, cpu))
	fmt.Printf("median peak RSS MiB:     %s %.1f, %s %.1f\n", ours, med(o, rss), base, med(b, rss))
	fmt.Printf("bytes/span:              %s %.1f, %s %.1f\n", ours, med(o, measurement.bytesPerSpan), base, med(b, measurement.bytesPerSpan))
	steal := func(m measurement) float64 { return 100 * m.steal }
	fmt.Printf("median steal %%:          %s %.1f, %s %.1f (the hypervisor's share of the machine: a run where it is high measures the neighbours)\n", ours, med(o, steal), base, med(b, steal))
	fmt.Printf("median sync ms:          %.2f (fdatasync of 1 MB of lines before each run; ours waits for one per request, the baseline for none)\n", med(all, syncMS))
}

func fmtRatios(r []float64) string {
	s := ""
	for i, v := range r {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%.2f", v)
	}
	return s
}

func syncMS(m measurement) float64 { return float64(m.sync) / float64(time.Millisecond) }
