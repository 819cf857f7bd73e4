package main

import "runtime/debug"

// The garbage collector's settings unless the environment sets GOGC or
// GOMEMLIMIT. The collector's live heap is tens of MiB, and every request
// allocates its decoded spans and its lines anew, so at Go's default of
// GOGC=100 a collector under load spends about a tenth of its CPU
// collecting; at 400 it collects a quarter as often, for a heap of a few
// times its live size (about 120–140 MiB peak RSS under `make bench-e2e`).
// The soft limit stops that growth where a large or hostile load keeps
// much live: past 512 MiB the collector collects as often as it must
// (up to half its CPU) instead of letting the heap double.
const (
	defaultGCPercent   = 400
	defaultMemoryLimit = 512 << 20
)

// applyGCDefaults sets what the environment (read through lookup) leaves
// unset, and reports which it set.
func applyGCDefaults(lookup func(string) (string, bool)) (gcPercent, memoryLimit bool) {
	if _, set := lookup("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
		gcPercent = true
	}
	if _, set := lookup("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(defaultMemoryLimit)
		memoryLimit = true
	}
	return gcPercent, memoryLimit
}
