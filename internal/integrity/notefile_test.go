package integrity

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The segments sidecar shares the checkpoints sidecar's record format; a
// damaged record in it is named as the caller's record, not a checkpoint.
func TestADamagedRecordIsNamedByItsSidecar(t *testing.T) {
	k, _ := testKeys(t, "notes")
	for _, tc := range []struct{ data, want string }{
		{strings.Repeat("a", noteReadBuffer+1) + "\n", "segment record #1: the record at byte 0 has a line longer than 4096 bytes"},
		{"\n", "segment record #1: the record at byte 0 starts with a blank line"},
		{"sandboxaudit segment v1\n", "segment record #1: byte 0: torn record at the end of the file"},
	} {
		_, err := ReadSegmentLog(strings.NewReader(tc.data), k.Verifier)
		require.EqualError(t, err, tc.want)
	}
}
