package trail

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A session keeps a trace id up to MaxTraceIDChars characters whole, and
// of a longer one its beginning, length and hash: enough to tell the id
// from any other, however long both are and wherever they differ.
func TestSessionTraceID(t *testing.T) {
	var s Session
	s.setTraceID("4bf92f3577b34da6a3ce929d0e0e4736")
	assert.Nil(t, s.LongTrace)
	assert.True(t, s.InFirstTrace("4bf92f3577b34da6a3ce929d0e0e4736"))
	assert.False(t, s.InFirstTrace("4bf92f3577b34da6a3ce929d0e0e4737"))

	whole := strings.Repeat("é", MaxTraceIDChars)
	s = Session{}
	s.setTraceID(whole)
	assert.Nil(t, s.LongTrace, "an id of MaxTraceIDChars characters is kept whole")
	assert.Equal(t, whole, s.TraceID)

	long := strings.Repeat("t", 1<<20)
	s = Session{}
	s.setTraceID(long)
	require.NotNil(t, s.LongTrace)
	assert.Equal(t, long[:MaxTraceIDChars], s.TraceID)
	assert.Equal(t, len(long), s.LongTrace.Bytes)
	assert.True(t, s.InFirstTrace(long))
	for _, other := range []string{
		long[:MaxTraceIDChars],              // the beginning alone
		long + "t",                          // longer
		long[:len(long)-1] + "u",            // the same length, differing at the end
		"u" + long[1:],                      // differing at the start
		long[:MaxTraceIDChars] + "\xff\xfe", // invalid bytes past the cut
	} {
		assert.False(t, s.InFirstTrace(other), "%.20q… (%d bytes)", other, len(other))
	}

	invalid := strings.Repeat("\xff", 2*MaxTraceIDChars)
	s = Session{}
	s.setTraceID(invalid)
	require.NotNil(t, s.LongTrace)
	assert.Equal(t, invalid[:MaxTraceIDChars], s.TraceID, "an invalid byte counts as one character")
}
