package idwindow

import (
	"hash/maphash"
	"iter"
)

// live reports whether a slot's stamp is one of the last size handed out.
func (w *Window[K]) live(stamp uint64) bool {
	return stamp >= firstStamp && stamp+uint64(w.size) >= w.next
}

func (w *Window[K]) home(k K) int {
	return int(maphash.Comparable(w.seed, k) & uint64(len(w.slots)-1))
}

// probe walks k's probe sequence up to the first empty slot. It returns the
// slot holding k live (or -1) and the first slot an add of k may take:
// empty, removed or expired. An expired copy of k further on is harmless:
// it is not live, and the next rebuild drops it.
func (w *Window[K]) probe(k K) (at, free int) {
	return w.probeFrom(k, w.home(k))
}

// probeFrom is probe with k's home slot already computed.
func (w *Window[K]) probeFrom(k K, home int) (at, free int) {
	mask := len(w.slots) - 1
	free = -1
	// Bounded: the table is never more than three quarters used.
	for i := home; ; i = (i + 1) & mask {
		s := &w.slots[i]
		switch {
		case s.stamp == emptySlot:
			if free < 0 {
				free = i
			}
			return -1, free
		case !w.live(s.stamp):
			if free < 0 {
				free = i
			}
		case s.key == k:
			return i, free
		}
	}
}

// rebuild empties the slots that are not live and moves every live key to
// the first empty slot from its home, in place. The walk starts at a slot
// that was empty before the clearing, so it visits each run of slots from
// its start: a key only ever moves towards its home, and never across a
// slot a later key still needs.
func (w *Window[K]) rebuild() {
	start := 0
	for w.slots[start].stamp != emptySlot { // found: at most ¾ of the slots are used
		start++
	}
	for i := range w.slots {
		if !w.live(w.slots[i].stamp) {
			w.slots[i] = slot[K]{}
		}
	}
	mask := len(w.slots) - 1
	w.used = 0
	for n := 1; n <= len(w.slots); n++ {
		i := (start + n) & mask
		s := w.slots[i]
		if s.stamp == emptySlot {
			continue
		}
		w.slots[i] = slot[K]{}
		j := w.home(s.key)
		for w.slots[j].stamp != emptySlot {
			j = (j + 1) & mask
		}
		w.slots[j] = s
		w.used++
	}
}

// touchBlock is how many keys homes looks up ahead of yielding them.
const touchBlock = 64

// homes yields each index of keys with its key's home slot, for the batch
// operations. It reads the homes of a block of keys before yielding any of
// them: on a table larger than what the CPU caches keep of it, every probe
// is a miss, and loads that depend on nothing else are in flight together,
// where the probes would wait for them one by one. Under the collector's
// load this moved bench-e2e more than the probes' share of the CPU profile
// suggests (bench/RESULTS.md, "End to end against the contrib fileexporter,
// and `canon` against Python"). A rebuild keeps the table's length, so a
// home stays valid while the block's keys are added.
func (w *Window[K]) homes(keys []K) iter.Seq2[int, int] {
	return func(yield func(i, home int) bool) {
		var homes [touchBlock]int
		for off := 0; off < len(keys); off += touchBlock {
			block := keys[off:min(off+touchBlock, len(keys))]
			for j, k := range block {
				homes[j] = w.home(k)
			}
			// The loads in a loop of their own: a few instructions each,
			// so the CPU has many of them in flight, where a hash between
			// two loads let only a handful be (a third less CPU per id in
			// BenchmarkAddNewFull).
			var sum uint64
			for _, h := range homes[:len(block)] {
				sum += w.slots[h].stamp
			}
			w.touched = sum // kept, so the compiler keeps the loads
			for j := range block {
				if !yield(off+j, homes[j]) {
					return
				}
			}
		}
	}
}
