package httpsink

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/internal/spool"
)

// TestOwnerSocketSkipIsLogged: a spool opened without its owner socket
// (a bind error) is said at Warn, naming the spool and the error.
func TestOwnerSocketSkipIsLogged(t *testing.T) {
	f := newFixture(t, FormatNDJSON, false)
	bindErr := errors.New("bind: permission denied")
	f.sink.logRecovery("/var/spool/x.jsonl", spool.Recovery{OwnerSocketSkipped: bindErr})
	got := f.logs.FilterLevelExact(zap.WarnLevel).FilterField(zap.String("spool", "/var/spool/x.jsonl")).All()
	require.Len(t, got, 1)
	require.Contains(t, got[0].Message, "owner socket")
	require.Equal(t, bindErr.Error(), got[0].ContextMap()["error"])

	f.sink.logRecovery("/var/spool/y.jsonl", spool.Recovery{})
	require.Zero(t, f.logs.FilterField(zap.String("spool", "/var/spool/y.jsonl")).Len(), "nothing to say")
}
