package sandboxauditencoding

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/ndjson"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
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

// FuzzUnmarshalTraces feeds arbitrary messages to UnmarshalTraces. It never
// panics; a refused message gives no spans and a redacted error; an accepted
// one gives spans that the exporter's mapping turns back into the message's
// events: every distinct line, none more often than the message has it (a
// start repeated while it waits for its finish is a retry, kept once). The
// lines are compared only when each is canonical: a line in another
// spelling comes back canonical. Seeds: testdata/fuzz/FuzzUnmarshalTraces.
func FuzzUnmarshalTraces(f *testing.F) {
	f.Add([]byte(goodStart + "\n" + goodFinish + "\n"))
	ext := newExt(f, execOutputConfig(), nil)

	f.Fuzz(func(t *testing.T, msg []byte) {
		td, err := ext.UnmarshalTraces(msg)
		if err != nil {
			require.Zero(t, td.SpanCount(), "a refused message delivered spans")
			require.Regexp(t, redactedLineError, err.Error())
			return
		}
		var want []string
		canonical := true
		for _, line := range ndjson.Lines(msg) {
			ev, err := auditevent.Decode(line)
			require.NoError(t, err)
			want = append(want, string(auditevent.AppendJSON(nil, &ev)))
			canonical = canonical && want[len(want)-1] == string(line)
		}
		events, st := spanmap.NewMapper(0).AppendTraces(nil, td)
		require.Zero(t, st.Invalid, "invalid spans: %v", st.FirstInvalid)
		require.LessOrEqual(t, len(events), len(want))
		if !canonical {
			return
		}
		got := make([]string, 0, len(events))
		for i := range events {
			got = append(got, string(auditevent.AppendJSON(nil, &events[i])))
		}
		left := map[string]int{}
		for _, l := range want {
			left[l]++
		}
		for _, l := range got {
			require.Positive(t, left[l], "a line the message does not hold, or holds fewer times: %s", l)
			left[l]--
		}
		for _, l := range got {
			delete(left, l)
		}
		require.Empty(t, left, "lines of the message lost")
	})
}
