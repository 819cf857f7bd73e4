package integrity

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// A witness that refuses every file of a templated path (it does not know
// their origins): the files waiting for cosignatures, which every round
// seals and submits again, stay within the idle files' bound, so the
// rounds do not grow with the sessions ever written. The files let go are
// warned about once.
func TestWitnessRetriesKeepTheIdleBound(t *testing.T) {
	k, _ := testKeys(t, "test")
	fake, pool := fakeWitnessPool(t, k)
	fake.SetStatus(http.StatusNotFound)
	dir := t.TempDir()
	core, logs := observer.New(zapcore.WarnLevel)
	s, err := NewSealer(Settings{Keys: k, Interval: time.Hour, OriginBase: dir, CallerOwns: true, Witnesses: pool,
		Logger: zap.New(core)})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close(bg)) }()
	const files = maxIdleLogs + 50
	for i := range files {
		p := sessionFile(dir, i)
		appendLocked(t, p, lines(1, 1))
		s.Wrote(p, 1)
	}
	require.NoError(t, s.SealPending(bg))
	s.wit.mu.Lock()
	retry, recorded := len(s.wit.retry), len(s.wit.recorded)
	s.wit.mu.Unlock()
	require.LessOrEqual(t, retry, maxIdleLogs)
	require.LessOrEqual(t, recorded, maxIdleLogs)
	require.Len(t, logs.FilterMessageSnippet("no longer submitted again").All(), 1)
}
