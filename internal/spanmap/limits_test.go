package spanmap

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// A span whose data would make a line over the mapper's limit is refused
// before that text is built, naming the attribute and the limit; the stats
// count it as too long. Data that fits is mapped as before.
func TestDataOverMaxLineBytesIsRefused(t *testing.T) {
	m := NewMapper(0).WithMaxLineBytes(1000)
	dels := `{"path":"` + strings.Repeat("\x7f", 200) + `"}` // 1,200 bytes escaped
	_, err := m.AppendSpanEvents(nil, sandboxSpan(t, map[string]any{semconv.AttrStartData: dels}), nil)
	require.Error(t, err)
	var tl *auditevent.TooLongError
	require.True(t, errors.As(err, &tl), "%v", err)
	assert.Equal(t, 1000, tl.Limit)
	assert.Contains(t, err.Error(), semconv.AttrStartData)
	assert.Contains(t, err.Error(), "max_line_bytes (1000 bytes)")

	var st Stats
	_, _ = m.AppendSpanEvents(nil, sandboxSpan(t, map[string]any{semconv.AttrStartData: dels}), &st)
	assert.Equal(t, 1, st.TooLong)

	fits := `{"path":"` + strings.Repeat("\x7f", 100) + `"}`
	evs, err := m.AppendSpanEvents(nil, sandboxSpan(t, map[string]any{semconv.AttrStartData: fits}), nil)
	require.NoError(t, err)
	assert.Len(t, evs[0].Data.Bytes(), 9+600+2)
}

// Deep nesting is refused as nesting, not as text that is not JSON.
func TestDeepDataSaysNestingDepth(t *testing.T) {
	deep := `{"a":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`
	_, err := NewMapper(0).AppendSpanEvents(nil, sandboxSpan(t, map[string]any{semconv.AttrStartData: deep}), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nesting depth over 200 levels")
	assert.NotContains(t, err.Error(), "not JSON object text")
}

// An unknown op lists the valid ones, without quoting the attribute.
func TestUnknownOpListsTheValidOnes(t *testing.T) {
	_, err := NewMapper(0).AppendSpanEvents(nil, sandboxSpan(t, map[string]any{semconv.AttrOperation: "frobnicate"}), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "must be one of: "+strings.Join(auditevent.Ops(), ", "))
	assert.NotContains(t, err.Error(), "frobnicate")
}
