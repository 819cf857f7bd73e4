package sandboxaudit

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readingWPM is a fair reading speed for technical prose, in words a
// minute.
const readingWPM = 230

// TestREADMEReadsInFiveMinutes holds the README to what a newcomer reads in
// five minutes, code blocks included: detail belongs in docs/, linked.
func TestREADMEReadsInFiveMinutes(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	require.NoError(t, err)
	words := len(strings.Fields(string(raw)))
	assert.LessOrEqual(t, words, 5*readingWPM,
		"README.md has %d words, %.1f minutes at %d words a minute: move detail into docs/ and link it",
		words, float64(words)/readingWPM, readingWPM)
}
