package idwindow

import (
	"math/rand/v2"
	"sync"
	"testing"
)

func TestNewRejectsNonPositiveSize(t *testing.T) {
	for _, n := range []int{0, -1} {
		if _, err := New[int](n); err == nil {
			t.Errorf("New(%d): want an error", n)
		}
	}
}

func TestWindowForgetsOldestFirst(t *testing.T) {
	w, err := New[int](3)
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k <= 3; k++ {
		if !w.Add(k) {
			t.Fatalf("Add(%d) on a fresh key = false", k)
		}
	}
	if w.Add(2) {
		t.Fatal("Add(2) again = true, want false")
	}
	w.Add(4) // evicts 1
	for k, want := range map[int]bool{1: false, 2: true, 3: true, 4: true} {
		if got := w.Contains(k); got != want {
			t.Errorf("Contains(%d) = %v, want %v", k, got, want)
		}
	}
	if w.Len() != 3 {
		t.Errorf("Len = %d, want 3", w.Len())
	}
}

func TestWindowNeverExceedsSize(t *testing.T) {
	w, _ := New[int](100)
	for k := range 10_000 {
		w.Add(k)
		if k%7 == 0 {
			w.Remove(k - 3)
		}
		if n := w.Len(); n > 100 {
			t.Fatalf("after %d adds Len = %d > size 100", k+1, n)
		}
	}
	// The last 100 added keys that were not removed are all there.
	for k := 9_900; k < 10_000; k++ {
		removed := (k+3)%7 == 0
		if w.Contains(k) == removed {
			t.Errorf("Contains(%d) = %v, removed=%v", k, w.Contains(k), removed)
		}
	}
}

func TestRemoveThenAddKeepsTheNewSlot(t *testing.T) {
	w, _ := New[string](2)
	w.Add("a")
	w.Add("b")
	w.Remove("a")
	w.Add("a") // a now lives in a newer slot than its first one
	w.Add("c") // overwrites a's old slot: must not forget the new a
	if !w.Contains("a") {
		t.Error("re-added key forgotten when its old slot was reused")
	}
	if w.Contains("b") {
		t.Error("b should have been evicted by c")
	}
}

func TestAddNewMarksFreshOnce(t *testing.T) {
	w, _ := New[int](10)
	w.Add(2)
	keys := []int{1, 2, 3, 1}
	fresh := make([]bool, len(keys))
	w.AddNew(keys, fresh)
	want := []bool{true, false, true, false}
	for i := range want {
		if fresh[i] != want[i] {
			t.Errorf("fresh[%d] (key %d) = %v, want %v", i, keys[i], fresh[i], want[i])
		}
	}
}

func TestAddNewConcurrentCallersClaimEachKeyOnce(t *testing.T) {
	w, _ := New[int](1000)
	keys := make([]int, 500)
	for i := range keys {
		keys[i] = i
	}
	var mu sync.Mutex
	claims := make(map[int]int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			fresh := make([]bool, len(keys))
			w.AddNew(keys, fresh)
			mu.Lock()
			defer mu.Unlock()
			for i, f := range fresh {
				if f {
					claims[keys[i]]++
				}
			}
		})
	}
	wg.Wait()
	for _, k := range keys {
		if claims[k] != 1 {
			t.Errorf("key %d claimed %d times, want 1", k, claims[k])
		}
	}
}

func TestHasReportsEachKey(t *testing.T) {
	w, _ := New[int](2)
	w.Add(1)
	w.Add(2)
	w.Add(3) // evicts 1
	present := make([]bool, 4)
	w.Has([]int{1, 2, 3, 4}, present)
	want := []bool{false, true, true, false}
	for i := range want {
		if present[i] != want[i] {
			t.Errorf("present[%d] = %v, want %v", i, present[i], want[i])
		}
	}
}

func TestAddAllAddsEveryKey(t *testing.T) {
	w, _ := New[int](3)
	w.AddAll(1, 2, 3, 4) // 1 evicted
	for k, want := range map[int]bool{1: false, 2: true, 3: true, 4: true} {
		if w.Contains(k) != want {
			t.Errorf("Contains(%d) = %v, want %v", k, !want, want)
		}
	}
}

// TestWindowMatchesModel runs random adds, removes and lookups against a
// plain model of the FIFO semantics, on a key space a few times the size so
// that keys age out, come back and the table rebuilds many times. Some adds
// and lookups are AddNew and Has batches longer than touchBlock, with
// repeated keys, so that a batch's homes, read ahead, are used across
// rebuilds.
func TestWindowMatchesModel(t *testing.T) {
	for _, size := range []int{1, 3, 8, 50, 64, 1000} {
		w, err := New[int](size)
		if err != nil {
			t.Fatal(err)
		}
		type entry struct {
			stamp   int
			removed bool
		}
		model := map[int]entry{}
		next := 0
		in := func(k int) bool {
			e, ok := model[k]
			return ok && !e.removed && e.stamp >= next-size
		}
		rng := rand.New(rand.NewPCG(uint64(size), 7))
		for op := range 200_000 {
			k := rng.IntN(4*size + 3)
			switch rng.IntN(10) {
			case 0:
				w.Remove(k)
				if in(k) {
					model[k] = entry{stamp: model[k].stamp, removed: true}
				}
			case 1:
				if got, want := w.Contains(k), in(k); got != want {
					t.Fatalf("size %d, op %d: Contains(%d) = %v, want %v", size, op, k, got, want)
				}
			case 2:
				keys := make([]int, 1+rng.IntN(3*touchBlock))
				for i := range keys {
					keys[i] = rng.IntN(4*size + 3)
				}
				present := make([]bool, len(keys))
				w.Has(keys, present)
				for i, k := range keys {
					if present[i] != in(k) {
						t.Fatalf("size %d, op %d: Has key %d (#%d of %d) = %v, want %v", size, op, k, i, len(keys), present[i], in(k))
					}
				}
			case 3:
				keys := make([]int, 1+rng.IntN(3*touchBlock))
				want := make([]bool, len(keys))
				for i := range keys {
					keys[i] = rng.IntN(4*size + 3)
					if want[i] = !in(keys[i]); want[i] {
						model[keys[i]] = entry{stamp: next}
						next++
					}
				}
				fresh := make([]bool, len(keys))
				w.AddNew(keys, fresh)
				for i := range keys {
					if fresh[i] != want[i] {
						t.Fatalf("size %d, op %d: AddNew key %d (#%d of %d) fresh = %v, want %v", size, op, keys[i], i, len(keys), fresh[i], want[i])
					}
				}
			default:
				want := !in(k)
				if want {
					model[k] = entry{stamp: next}
					next++
				}
				if got := w.Add(k); got != want {
					t.Fatalf("size %d, op %d: Add(%d) = %v, want %v", size, op, k, got, want)
				}
			}
		}
		n := 0
		for k := range 4*size + 3 {
			if in(k) {
				n++
			}
		}
		if got := w.Len(); got != n {
			t.Fatalf("size %d: Len = %d, want %d", size, got, n)
		}
	}
}
