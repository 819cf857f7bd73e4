package cli

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A handover the chain refuses is worded as the one it trusts: its
// count of lines in words, and the origin escaped once, by the shown
// stream, not quoted by Go first (whose \x1b the stream would escape
// again).
func TestForkedHandoverMsgAsTrustedOne(t *testing.T) {
	var out bytes.Buffer
	_, _ = fmt.Fprintln(shownLines{&out}, finalHandoverMsg("f", 1, "k/a\x1bb", "K", "F"))
	assert.Equal(t, `f: handover: final at 1 line; the log goes on as "k/a\x1bb", signed by K, not trusted: `+
		"the key that signed this handover handed over to F first\n", out.String())
	assert.Equal(t, `f: handover: final at 2 lines; the log goes on as "k/a", signed by K`,
		finalHandoverMsg("f", 2, "k/a", "K", ""))
}
