package httpsink

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/internal/spool"
)

// ReplayFile sends the spool file at path to set.Endpoint by hand (the
// operator CLI's `replay`), with the same client, format and batch limits as
// the sink, retrying each request per set.Retry. Acknowledged lines are
// trimmed from the file through the spool's durable offset, so an
// interrupted run resumes where it stopped.
//
// Unlike the background replayer it drops nothing: the first request that
// fails for good (retries spent, or any 4xx but 429: a refused content
// included, and an endpoint refusing us is not retried) stops the run and
// the lines stay in the file for the operator to inspect. set.Spool is
// ignored. It returns the number of lines delivered.
//
// With adopt, a file holding lines but no offset sidecar (a spool written
// by another program, such as the Python sink's spool_path) is taken as a
// spool; without it such a file is refused, as it may be an audit file.
func ReplayFile(ctx context.Context, path string, set Settings, adopt bool) (sent int, err error) {
	set.Spool = nil
	sk, err := New(set)
	if err != nil {
		return 0, err
	}
	// Opening would create a missing file; a typo should be an error.
	if _, err := os.Stat(path); err != nil {
		return 0, err // names the path
	}
	sp, err := spool.Open(ctx, spool.Options{Path: path, Adopt: adopt, Check: spool.CanonicalEvent})
	if err != nil {
		return 0, err // names the spool
	}
	sk.logRecovery(sp.Path(), sp.Recovery())
	sk.watchDamage(sp)
	defer func() {
		if cerr := sp.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	sent, err = sp.Replay(ctx, sk.set.MaxBatchLines, sk.set.MaxBatchBytes, sk.replayFileBatch)
	if err != nil {
		return sent, fmt.Errorf("%s sent, then: %w", plural.Count(sent, "line"), err)
	}
	if err := sp.Upkeep(); err != nil {
		// The run cannot resume where it stopped: say so, not success.
		return sent, fmt.Errorf("%s sent, but the spool could not save its offset or trim itself "+
			"(a second run may send some again): %w", plural.Count(sent, "line"), err)
	}
	return sent, nil
}

// replayFileBatch posts one batch for ReplayFile, in halves when the
// endpoint's body limit asks (a 413), as the exporter's replayer does. A
// line refused as content stops the run instead of being dropped: the
// operator decides. A batch not settled whole is sent whole again by the
// next run (what went through is then a duplicate).
func (s *Sink) replayFileBatch(ctx context.Context, batch []byte, lines int) error {
	hv := batchPoster{post: func(ctx context.Context, body []byte) error {
		_, err := s.postWithRetry(ctx, body)
		return err
	}}
	h, err := hv.send(ctx, batch, lines)
	if err == nil && h.refused > 0 {
		err = h.refusal
	}
	if err == nil {
		s.set.Observer.Replayed(ctx, lines)
	}
	return err
}
