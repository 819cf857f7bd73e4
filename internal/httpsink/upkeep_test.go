package httpsink

import (
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"
)

// A spool that cannot save the offset the endpoint acknowledged (a full
// disk; here the sidecar's temporary name is a directory) does not resend
// the same batch every round: each line arrives once, one ERROR says why,
// and an INFO says when it is over.
func TestReplayDoesNotResendWhenTheOffsetCannotBeSaved(t *testing.T) {
	f := newFixture(t, FormatNDJSON, true)
	require.NoError(t, os.Mkdir(f.spoolPath+".offset.tmp", 0o700))
	f.start(t)
	session := uuid.New()
	f.srv.down()
	for i := range int64(3) {
		require.NoError(t, f.sink.Send(sendCtx(t), makeLines(t, session, i*10+1, i*10+10, 50), 10))
	}
	f.srv.up()
	require.Eventually(t, func() bool { return len(f.srv.acceptedEvents(t)) >= 30 }, 10*time.Second, 10*time.Millisecond)
	// The failed save is logged after the endpoint took the lines.
	require.Eventually(t, func() bool {
		return f.logs.FilterMessageSnippet("Spool could not save").FilterLevelExact(zapcore.ErrorLevel).Len() > 0
	}, 10*time.Second, 10*time.Millisecond)
	time.Sleep(20 * 20 * time.Millisecond) // twenty replay intervals, each a resend before
	assert.Equal(t, seqRange(1, 30), seqs(f.srv.acceptedEvents(t)))
	assert.Equal(t, 1, f.logs.FilterMessageSnippet("Spool could not save").FilterLevelExact(zapcore.ErrorLevel).Len())

	require.NoError(t, os.Remove(f.spoolPath+".offset.tmp"))
	require.Eventually(t, func() bool { return f.logs.FilterMessageSnippet("trimmed its file again").Len() == 1 },
		10*time.Second, 10*time.Millisecond, "a round with nothing to send does the upkeep")
	f.waitSpoolEmpty(t)
	assert.Equal(t, seqRange(1, 30), seqs(f.srv.acceptedEvents(t)))
}
