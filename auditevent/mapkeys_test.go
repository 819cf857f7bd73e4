package auditevent

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMapKeysRenamesAndSortsAgain: changed names at any depth, the result
// sorted again and canonical, numbers and other values exactly as they
// were, and a changed name that collides numbered rather than lost.
func TestMapKeysRenamesAndSortsAgain(t *testing.T) {
	d := MustParseData(`{"zz":{"a":1,"secret-x":[1180591620717411303424,1e-05,{"secret-y":null}]},"b":"v","secret-b":true,"X":0}`)
	var seen []string
	out, changed := d.MapKeys(func(k string) (string, bool) {
		seen = append(seen, k)
		if strings.HasPrefix(k, "secret-") {
			return "X", true
		}
		return k, false
	})
	require.True(t, changed)
	assert.Equal(t, []string{"X", "b", "secret-b", "zz", "a", "secret-x", "secret-y"}, seen, "once each, in text order")
	assert.Equal(t, `{"X":0,"X #2":true,"b":"v","zz":{"X":[1180591620717411303424,1e-05,{"X":null}],"a":1}}`, out.String())
	again, err := ParseData(out.Bytes())
	require.NoError(t, err)
	assert.Equal(t, out.String(), again.String())

	same, changed := d.MapKeys(func(k string) (string, bool) { return k, false })
	assert.False(t, changed)
	assert.Equal(t, d.String(), same.String())
}
