package httpsink

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestRequestShapeRefusalKeepsTheSpool: every request the sink sends has
// the same URL, headers, Content-Type (from format) and Content-Encoding
// (from compression). A 415 or 431 to them refuses that configuration, not
// an event: the project's own receiver answers 415 to a compression it was
// not configured to take and 431 to headers over its limit. Dropped as
// refused content, an edge's whole spool went after such a mismatch; the
// lines are kept until the endpoint takes them.
func TestRequestShapeRefusalKeepsTheSpool(t *testing.T) {
	for _, code := range []int{http.StatusUnsupportedMediaType, http.StatusRequestHeaderFieldsTooLarge} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spool.jsonl")
			session := uuid.New()
			writeSpool(t, path, makeLines(t, session, 1, 10, 10))
			f := newFixture(t, FormatNDJSON, false, func(s *Settings) {
				s.Spool = openSpool(t, path, 0)
				s.MaxBatchLines = 4
			})
			f.srv.setDefault(status(code, nil, "unsupported Content-Encoding"))
			f.start(t)

			require.Eventually(t, func() bool { return len(f.srv.all()) >= 3 }, 10*time.Second, 5*time.Millisecond)
			require.Empty(t, f.obs.stats().dropped, "nothing dropped while the endpoint refuses the requests")
			require.Equal(t, seqRange(1, 10), seqs(decodeBody(t, spoolFileBytes(t, path))), "all kept, in order")

			f.srv.setDefault(ok) // the operator fixes the configuration
			waitDrained(t, f.sink.spool, path)
			require.Equal(t, seqRange(1, 10), seqs(f.srv.acceptedEvents(t)), "exactly once, in order")
			require.Empty(t, f.obs.stats().dropped)
		})
	}
}
