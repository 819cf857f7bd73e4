package httpsink

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestDamagedLineNotKeptIsNotSaidKept: a damaged line the quarantine file
// cannot take (here a symlink planted at its path, which the spool does
// not follow) is passed over. Its ERROR must say so, not that the line was
// set aside, and the link's target is left alone.
func TestDamagedLineNotKeptIsNotSaidKept(t *testing.T) {
	f := newCheckedFixture(t, FormatNDJSON)
	f.start(t)
	f.srv.down()
	lines := makeLines(t, uuid.New(), 1, 5, 60)
	require.NoError(t, f.sink.Send(sendCtx(t), lines, 5))
	acked := splitLines(lines)
	writeAt(t, f.spoolPath, offsetOf(acked, 1), make([]byte, len(acked[1])-1))
	target := filepath.Join(t.TempDir(), "elsewhere")
	require.NoError(t, os.WriteFile(target, []byte("untouched\n"), 0o600))
	require.NoError(t, os.Symlink(target, f.spoolPath+".quarantine"))

	f.srv.up()
	waitReceived(t, f.srv, FormatNDJSON, 4, 30*time.Second)
	bad := f.logs.FilterMessageSnippet("spool line is not a valid audit event").All()
	require.Len(t, bad, 1)
	require.Empty(t, bad[0].ContextMap()["kept_in"])
	require.NotContains(t, bad[0].Message, "set aside in the quarantine file", "the line was not kept")
	require.Contains(t, bad[0].Message, "not kept")
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "untouched\n", string(b))
}
