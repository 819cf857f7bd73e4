package groupcommit

import (
	"errors"
	"testing"
	"time"
)

// waitQueued waits until q holds n batches.
func waitQueued(t *testing.T, q *Queue, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for q.Len() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d batches queued, want %d", q.Len(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// queueBehind starts a Wait per batch behind the committing front one and
// returns, per batch, whether its writer was told to commit.
func queueBehind(t *testing.T, q *Queue, batches ...*Batch) []chan bool {
	t.Helper()
	out := make([]chan bool, len(batches))
	for i, b := range batches {
		out[i] = make(chan bool, 1)
		go func() { out[i] <- q.Wait(b) }()
		waitQueued(t, q, i+2)
	}
	return out
}

func TestFrontCommitsItsGroupAndWakesTheRest(t *testing.T) {
	var q Queue
	first := &Batch{Data: []byte("aa")}
	if !q.Wait(first) {
		t.Fatal("the first batch of an empty queue must commit")
	}
	a, b, c := &Batch{Data: []byte("bbb")}, &Batch{Data: []byte("cccc")}, &Batch{Data: []byte("dd")}
	woke := queueBehind(t, &q, a, b, c)

	group := q.Group(9) // 2+3+4 fit, the fourth does not
	if len(group) != 3 || group[0] != first || group[1] != a || group[2] != b {
		t.Fatalf("group = %v", group)
	}
	errB := errors.New("b failed")
	first.Finish(nil)
	a.Finish(nil)
	b.Finish(errB)
	q.Pop()

	if commit := <-woke[0]; commit || a.Err() != nil {
		t.Fatalf("a: commit %v err %v, want done without error", commit, a.Err())
	}
	if commit := <-woke[1]; commit || !errors.Is(b.Err(), errB) {
		t.Fatalf("b: commit %v err %v, want done with its error", commit, b.Err())
	}
	if commit := <-woke[2]; !commit || c.Done() {
		t.Fatalf("c: commit %v done %v, want to commit next", commit, c.Done())
	}
	if g := q.Group(100); len(g) != 1 || g[0] != c {
		t.Fatalf("next group = %v, want just c", g)
	}
	c.Finish(nil)
	q.Pop()
	if q.Len() != 0 {
		t.Fatalf("%d batches left", q.Len())
	}
}

func TestGroupOfZeroBytesIsTheFrontAlone(t *testing.T) {
	var q Queue
	first := &Batch{Data: []byte("x")}
	q.Wait(first)
	woke := queueBehind(t, &q, &Batch{Data: []byte("y")})
	if g := q.Group(0); len(g) != 1 || g[0] != first {
		t.Fatalf("group = %v, want the front alone", g)
	}
	first.Finish(nil)
	q.Pop()
	if !<-woke[0] {
		t.Fatal("the next batch must commit")
	}
}

// A commit that panics still pops: the batches it took fail with
// ErrAborted rather than wake up believing they are the next committer.
func TestPopFailsUnfinishedBatches(t *testing.T) {
	var q Queue
	first := &Batch{}
	q.Wait(first)
	a := &Batch{}
	woke := queueBehind(t, &q, a)
	q.Group(10)
	q.Pop()
	if commit := <-woke[0]; commit || !errors.Is(a.Err(), ErrAborted) || !errors.Is(first.Err(), ErrAborted) {
		t.Fatalf("commit %v, errs %v / %v; want both aborted", commit, first.Err(), a.Err())
	}
}

// Once popped, batches (and the data they carry) are not reachable from
// the queue, which lives as long as its file.
func TestPoppedBatchesAreNotRetained(t *testing.T) {
	var q Queue
	first := &Batch{Data: make([]byte, 10)}
	q.Wait(first)
	queueBehind(t, &q, &Batch{Data: make([]byte, 10)}, &Batch{Data: make([]byte, 10)})
	group := q.Group(100)
	FinishAll(group, nil)
	q.Pop()
	for i, b := range q.batches[:cap(q.batches)] {
		if b != nil {
			t.Errorf("queue slot %d still holds a batch", i)
		}
	}
	for i, b := range q.group[:cap(q.group)] {
		if b != nil {
			t.Errorf("group slot %d still holds a batch", i)
		}
	}
}
