// Package groupcommit lets concurrent writers to one file share its
// expensive step (the flock hold and the fdatasync): each writer queues
// its batch, the writer at the front commits the front of the queue as a
// group while the others wait, and each waiter is woken once, when its
// batch is done or when it reaches the front and commits next.
package groupcommit // import "github.com/sandboxaudit/sandboxaudit/internal/groupcommit"

import (
	"errors"
	"sync"
)

// MaxGroupBytes is the group bound both committers use: one sync then
// covers at most 16 MiB, so a crowd of writers cannot hold a file's flock
// (which another process, the Python sink, may be waiting for) through one
// huge write and sync.
const MaxGroupBytes = 16 << 20

// ErrAborted is the error of a batch its committer did not finish (the
// commit panicked).
var ErrAborted = errors.New("commit aborted: the committer did not finish")

// Batch is one writer's data and, once done, its outcome. Only the
// committer calls Finish, before Pop; the writer reads the outcome after
// Wait returns false, or after its own commit's Pop.
type Batch struct {
	Data  []byte
	ready chan struct{} // made for a batch that queues behind others
	done  bool          // set by the committer before it wakes the batch
	err   error
}

// Finish records the batch's outcome; the committer calls it for every
// batch of its group before Pop.
func (b *Batch) Finish(err error) { b.done, b.err = true, err }

// Done reports whether the batch has its outcome.
func (b *Batch) Done() bool { return b.done }

// Err is the batch's outcome.
func (b *Batch) Err() error { return b.err }

// FinishAll finishes every batch of group with err.
func FinishAll(group []*Batch, err error) {
	for _, b := range group {
		b.Finish(err)
	}
}

// Queue is the batches waiting for one file, the one being committed
// first. The zero value is ready to use.
type Queue struct {
	mu      sync.Mutex
	batches []*Batch
	group   []*Batch // the committer's, reused; its length is what Pop removes
}

// Wait queues b and returns once b is done (by another writer's commit) or
// at the front. It reports whether the caller must commit: then it defers
// Pop, takes its group with Group (unless it fails before) and finishes
// the group's batches.
func (q *Queue) Wait(b *Batch) (commit bool) {
	q.mu.Lock()
	q.batches = append(q.batches, b)
	if len(q.batches) == 1 {
		q.mu.Unlock()
		return true
	}
	b.ready = make(chan struct{})
	q.mu.Unlock()
	<-b.ready
	return !b.done
}

// Group returns the batch at the front and, while they fit in maxBytes
// together, the ones after it (with maxBytes 0, the first alone: callers
// queue no empty batches). Only the committer calls it, with the lock that
// makes it the file's only writer held, so batches queued while that lock
// was awaited join. The slice is valid until Pop.
func (q *Queue) Group(maxBytes int) []*Batch {
	q.mu.Lock()
	defer q.mu.Unlock()
	n, size := 1, len(q.batches[0].Data)
	for n < len(q.batches) && size+len(q.batches[n].Data) <= maxBytes {
		size += len(q.batches[n].Data)
		n++
	}
	q.group = append(q.group[:0], q.batches[:n]...)
	return q.group
}

// Pop removes the committer's group (its own batch alone if it took none)
// from the front, wakes the waiters in it, and wakes the batch now at the
// front to commit next. A batch not finished by then fails with
// ErrAborted, so that its writer does not take itself for the next
// committer. Call it even when the commit panics.
func (q *Queue) Pop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := max(len(q.group), 1)
	for i, b := range q.batches[:n] {
		if !b.done {
			b.Finish(ErrAborted)
		}
		if i > 0 {
			close(b.ready)
		}
	}
	rest := copy(q.batches, q.batches[n:])
	clear(q.batches[rest:])
	q.batches = q.batches[:rest]
	clear(q.group) // the batches' data must not stay reachable from here
	q.group = q.group[:0]
	if rest > 0 {
		close(q.batches[0].ready)
	}
}

// Len is how many batches are queued, the one being committed included.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.batches)
}
