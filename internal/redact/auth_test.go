package redact

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// TestAuthNameWithBasicCredential: Docker's config.json and .npmrc keep a
// registry login as base64 of user:password under "auth" or "_auth"; it is
// cut as a Basic credential. Other values of such a name stay.
func TestAuthNameWithBasicCredential(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, tc := range []struct{ in, want string }{
		{`{"auths":{"registry.example.com":{"auth":"` + redacttest.BasicAuth + `"}}}`,
			`{"auths":{"registry.example.com":{"auth":"[REDACTED:basic_auth]"}}}`},
		{"{\n\t\"auths\": {\n\t\t\"ghcr.io\": {\n\t\t\t\"auth\": \"" + redacttest.BasicAuth + "\"\n\t\t}\n\t}\n}",
			"{\n\t\"auths\": {\n\t\t\"ghcr.io\": {\n\t\t\t\"auth\": \"[REDACTED:basic_auth]\"\n\t\t}\n\t}\n}"},
		{"registry=https://npm.example.com/\n_auth=" + redacttest.BasicAuth + "\nalways-auth=true\n",
			"registry=https://npm.example.com/\n_auth=[REDACTED:basic_auth]\nalways-auth=true\n"},
		{"//npm.example.com/:_auth=" + redacttest.BasicAuth, "//npm.example.com/:_auth=[REDACTED:basic_auth]"},
	} {
		got, _ := r.String(tc.in, nil)
		assert.Equal(t, tc.want, got)
	}
	for _, s := range []string{
		`{"auth": "none"}`, "auth: required", "AUTH=oauth2", `{"auth":"dXNlcm5hbWU="}`, // base64 of "username": no colon
		`{"auth": "` + redacttest.BasicAuth + `x"}`, // not base64
	} {
		got, changed := r.String(s, nil)
		assert.False(t, changed, "%q became %q", s, got)
	}

	d := auditevent.MustParseData(`{"content":{"auths":{"r":{"auth":"` + redacttest.BasicAuth + `","email":"a@example.com"}}},"auth":"none"}`)
	require.True(t, r.MayCut(d))
	var c Counts
	got, changed := r.Data(d, &c)
	require.True(t, changed)
	assert.Equal(t, `{"auth":"none","content":{"auths":{"r":{"auth":"[REDACTED:basic_auth]","email":"a@example.com"}}}}`, got.String())
	assert.Equal(t, 1, c.Total())
}

// TestManyRegistryLogins: every login of a config with many registries is
// cut, however many cuts the same pass made before it.
func TestManyRegistryLogins(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	var in, want strings.Builder
	for i := range 6 {
		fmt.Fprintf(&in, `"r%d.example.com":{"auth":"YWxhZGRpbjpvcGVuc2VzYW1l"},`, i)
		fmt.Fprintf(&want, `"r%d.example.com":{"auth":"[REDACTED:basic_auth]"},`, i)
	}
	var c Counts
	got, _ := r.String(in.String(), &c)
	assert.Equal(t, want.String(), got)
	assert.Equal(t, 6, c[KindBasicAuth])
}
