package admission

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStreamLead: a streamed body's bytes may run ahead of what they
// decoded to by streamLead and a quarter of the decoded bytes (an encoder
// that stretches incompressible data), not further.
func TestStreamLead(t *testing.T) {
	for _, c := range []struct {
		decoded int64
		ok      bool
	}{
		{0, false},
		{400 << 10, true},  // 512 KiB arrived, 400 KiB decoded: 12 KiB ahead past the quarter
		{300 << 10, false}, // 137 KiB ahead past the quarter
	} {
		b := &encodedBody{ReadCloser: io.NopCloser(bytes.NewReader(make([]byte, 512<<10))), encoding: "gzip", lead: streamLead}
		b.addDecoded(int(c.decoded))
		_, err := io.Copy(io.Discard, b)
		if c.ok {
			require.NoError(t, err, "%d decoded", c.decoded)
			continue
		}
		de, ok := errors.AsType[*DecodeError](err)
		require.True(t, ok, "%d decoded: %v", c.decoded, err)
		assert.Equal(t, "gzip", de.Encoding)
	}
}
