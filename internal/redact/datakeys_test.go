package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// TestDataMemberNamesAreCut: a client may key a map by a credential (an
// env map written the other way round, headers as keys). The name is cut
// as text, at any depth, and the result is canonical; two names that cut
// to the same text both stay, numbered, so no member is lost; a second
// pass changes nothing.
func TestDataMemberNamesAreCut(t *testing.T) {
	const tok = "ghp_R8sTq2VwXyZ1aBcDeFgHiJkLmNoPqRsTuV4w"
	const tok2 = "ghp_Z8sTq2VwXyZ1aBcDeFgHiJkLmNoPqRsTuV4w"
	r, err := New(DefaultSettings())
	require.NoError(t, err)
	d := auditevent.MustParseData(`{"` + tok + `":"k","a":{"x":[{"DB_PASSWORD=hunter2hunter2":1}]},` +
		`"b":{"` + tok2 + `":2,"[REDACTED:github_token]":0,"` + tok + `":1},"z":"` + tok + `"}`)
	var c Counts
	out, changed := r.Data(d, &c)
	require.True(t, changed)
	assert.Equal(t, `{"[REDACTED:github_token]":"k","a":{"x":[{"DB_PASSWORD=[REDACTED:password]":1}]},`+
		`"b":{"[REDACTED:github_token]":0,"[REDACTED:github_token] #2":1,"[REDACTED:github_token] #3":2},`+
		`"z":"[REDACTED:github_token]"}`, out.String())
	assert.Equal(t, 5, c.Total(), "four names and one value")
	again, changed := r.Data(out, &c)
	assert.False(t, changed)
	assert.Equal(t, out.String(), again.String())
	parsed, err := auditevent.ParseData(out.Bytes())
	require.NoError(t, err)
	assert.Equal(t, out.String(), parsed.String(), "canonical")

	plain := auditevent.MustParseData(`{"env":{"PASSWORD":"x","HOME":"/h"},"n":[1,2.5,{"k":null}]}`)
	out, _ = r.Data(plain, nil)
	assert.Equal(t, `{"env":{"HOME":"/h","PASSWORD":"[REDACTED:password]"},"n":[1,2.5,{"k":null}]}`, out.String())
}
