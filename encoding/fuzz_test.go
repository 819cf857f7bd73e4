package sandboxauditencoding

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/ndjson"
)

var redactedLineError = regexp.MustCompile(`^sandboxaudit_encoding: invalid message: line [1-9][0-9]*: (?:[a-z_]+|\(unknown field\)): [a-z_]+$`)

// FuzzUnmarshalLogs feeds arbitrary messages to UnmarshalLogs. It never
// panics, and a message is all or nothing: either one record per non-blank
// line, each body a canonical line that MarshalLogs writes back unchanged,
// or an error that names a line, a field and an error type (nothing from
// the message) and no records. Seeds: testdata/fuzz/FuzzUnmarshalLogs.
func FuzzUnmarshalLogs(f *testing.F) {
	f.Add([]byte(goodStart + "\n" + goodFinish + "\n"))
	ext := newExt(f, execOutputConfig(), nil)

	f.Fuzz(func(t *testing.T, msg []byte) {
		ld, err := ext.UnmarshalLogs(msg)
		if err != nil {
			require.Zero(t, ld.LogRecordCount(), "a refused message delivered records")
			require.True(t, errors.Is(err, ErrInvalidMessage), "%v", err)
			require.Regexp(t, redactedLineError, err.Error())
			return
		}
		require.Equal(t, ndjson.CountLines(msg), ld.LogRecordCount())
		var want strings.Builder
		records := ld.ResourceLogs()
		for i := 0; i < records.Len(); i++ {
			lrs := records.At(i).ScopeLogs().At(0).LogRecords()
			for j := 0; j < lrs.Len(); j++ {
				body := lrs.At(j).Body().Str()
				ev, err := auditevent.Decode([]byte(body))
				require.NoError(t, err, "record body %q does not decode", body)
				require.Equal(t, body, string(auditevent.AppendJSON(nil, &ev)), "record body is not canonical")
				want.WriteString(body + "\n")
			}
		}
		out, err := ext.MarshalLogs(ld)
		require.NoError(t, err)
		require.Equal(t, want.String(), string(out))
	})
}
