package redact

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

func TestUserPatternsKeysAndAllow(t *testing.T) {
	r := mustNew(t, Settings{
		Enabled:  true,
		Patterns: []string{`INTERNAL-[0-9]{6}`, `session=(\w+)`},
		Keys:     []string{"X-Internal-Auth"},
		Allow:    []string{`^AKIAIOSFODNN7EXAMPLE$`},
	})
	var c Counts
	got, _ := r.String("id INTERNAL-493027 session=abc123 x_internal_auth=zz9 AKIAIOSFODNN7EXAMPLE "+redacttest.AWSKeyID, &c)
	assert.Equal(t, "id [REDACTED:custom_pattern] session=[REDACTED:custom_pattern] x_internal_auth=[REDACTED:custom_key] AKIAIOSFODNN7EXAMPLE [REDACTED:aws_access_key]", got)
	assert.Equal(t, 2, c[KindCustomPattern])
	assert.Equal(t, 1, c[KindCustomKey])
	assert.Equal(t, 1, c[KindAWSAccessKey])
}

func TestHashMarkersTellSecretsApart(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "hash.key")
	require.NoError(t, os.WriteFile(key, []byte("0123456789abcdef0123456789abcdef\n"), 0o600))
	r := mustNew(t, Settings{Enabled: true, HashKeyFile: key})
	a, _ := r.String("GITHUB_TOKEN="+redacttest.GitHubToken, nil)
	b, _ := r.String("again "+redacttest.GitHubToken, nil)
	c, _ := r.String(redacttest.GitHubPAT, nil)
	marker := regexp.MustCompile(`\[REDACTED:github_token:[0-9a-f]{8}\]`)
	ma, mb, mc := marker.FindString(a), marker.FindString(b), marker.FindString(c)
	require.NotEmpty(t, ma)
	assert.Equal(t, ma, mb, "one secret, one hash")
	assert.NotEqual(t, ma, mc, "two secrets, two hashes")
	again, changed := r.String(a, nil)
	assert.False(t, changed)
	assert.Equal(t, a, again)
}

func TestValidateNamesKeyAndIndex(t *testing.T) {
	dir := t.TempDir()
	loose := filepath.Join(dir, "loose.key")
	require.NoError(t, os.WriteFile(loose, []byte("0123456789abcdef0123456789abcdef"), 0o644))
	short := filepath.Join(dir, "short.key")
	require.NoError(t, os.WriteFile(short, []byte("abc"), 0o600))
	for _, tc := range []struct {
		o    auditevent.RedactOverride
		want string
	}{
		{auditevent.RedactOverride{Patterns: []string{"ok", "(x"}}, `p::patterns[1]: not an RE2 expression`},
		{auditevent.RedactOverride{Patterns: []string{"a*"}}, `p::patterns[0]: "a*" can match an empty string`},
		{auditevent.RedactOverride{Allow: []string{""}}, `p::allow[0]: empty pattern`},
		{auditevent.RedactOverride{Keys: []string{"--"}}, `p::keys[0]: "--" has no letter or digit`},
		{auditevent.RedactOverride{HashKeyFile: &loose}, `p::hash_key_file: ` + loose + ` has mode 0644`},
		{auditevent.RedactOverride{HashKeyFile: &short}, `p::hash_key_file: ` + short + ` holds 3 bytes`},
	} {
		err := Validate("p::", tc.o)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
		assert.NotContains(t, err.Error(), "0123456789abcdef", "the key never shows")
	}
	require.NoError(t, Validate("p::", auditevent.RedactOverride{Patterns: []string{"x+"}, Keys: []string{"k"}}))
}

func TestDataCutsByMemberNameAndByPreviousFlag(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	d := auditevent.MustParseData(`{"argv":["aws","--secret-access-key","` + redacttest.AWSSecret + `","--token-file","/run/t","--password","-v"],` +
		`"env":{"DB_PASSWORD":"pw","PGPASSFILE":"/home/a/.pgpass","nested":{"credentials":["a","b"]}},"n":1,"ok":true,"x":null,` +
		`"cwd":"/w/é","note":"tok ` + redacttest.GitHubToken + `"}`)
	var c Counts
	got, changed := r.Data(d, &c)
	require.True(t, changed)
	assert.Equal(t, `{"argv":["aws","--secret-access-key","[REDACTED:aws_secret_key]","--token-file","/run/t","--password","-v"],`+
		`"cwd":"/w/\u00e9","env":{"DB_PASSWORD":"[REDACTED:password]","PGPASSFILE":"/home/a/.pgpass","nested":{"credentials":["[REDACTED:credential]","[REDACTED:credential]"]}},`+
		`"n":1,"note":"tok [REDACTED:github_token]","ok":true,"x":null}`, got.String())
	reparsed, err := auditevent.ParseData(got.Bytes())
	require.NoError(t, err)
	assert.Equal(t, got.String(), reparsed.String(), "still canonical")
	assert.Equal(t, 5, c.Total())

	same, changed := r.Data(got, nil)
	assert.False(t, changed)
	assert.Equal(t, got.String(), same.String())
}

func TestOutputSeesSecretsAcrossTheLimit(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	pad := strings.Repeat("x", 90) + "\n"
	raw := []byte(pad + redacttest.PEMBlock + "\ntail")
	// the limit falls inside the PEM body: the reference would show its start
	got := r.Output(raw, 140, nil)
	assert.Equal(t, pad+"[REDACTED:pem_private_key]\ntail", got, "the cut text fits the limit")
	got = r.Output(append(raw, strings.Repeat("y", 200)...), 140, nil)
	assert.Equal(t, 141, utf8.RuneCountInString(got))
	assert.Equal(t, pad+"[REDACTED:pem_private_key]\ntail"+strings.Repeat("y", 140-91-26-5)+auditevent.Ellipsis, got)

	// nothing to cut: exactly safe_decode
	plain := []byte("héllo \xff wörld, plain output")
	for _, limit := range []int{0, 3, 10, 1000} {
		assert.Equal(t, auditevent.SafeDecode(plain, limit), r.Output(plain, limit, nil), "limit %d", limit)
	}
	// the limit cuts the marker: no secret shows, the limit holds
	got = r.Output([]byte("t "+redacttest.GitHubToken+" after"), 8, nil)
	assert.Equal(t, "t [REDAC"+auditevent.Ellipsis, got)
}

func TestIdempotentOnSamples(t *testing.T) {
	r := mustNew(t, Settings{Enabled: true, Patterns: []string{redacttest.UserPattern}, Keys: []string{redacttest.UserKey}})
	for _, s := range append(redacttest.Argv(), redacttest.Text()) {
		once, _ := r.String(s, nil)
		twice, changed := r.String(once, nil)
		assert.False(t, changed, "%q -> %q -> %q", s, once, twice)
	}
	got, _ := r.String(redacttest.Text(), nil)
	for _, secret := range redacttest.Secrets() {
		assert.NotContains(t, got, secret)
	}
}

func TestPatternsSkipMarkers(t *testing.T) {
	r := mustNew(t, Settings{Enabled: true, Patterns: []string{`D:[a-z]+`, `x+`, `\]y`}})
	got, _ := r.String("[REDACTED:jwt] xx ]y [REDACTED:jwt]y", nil)
	assert.Equal(t, "[REDACTED:jwt] [REDACTED:custom_pattern] [REDACTED:custom_pattern] [REDACTED:jwt]y", got)
}

// TestProbeSeesWhatTheWalkCuts: data whose walk cuts something is never
// skipped by the probe, in each way a value can be cut.
func TestProbeSeesWhatTheWalkCuts(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, s := range []string{
		`{"argv":["aws","--secret-access-key","X"]}`,
		`{"env":{"DB_PASSWORD":"x"}}`,
		`{"credentials":["a"]}`,
		`{"a":{"secrets":{"b":"c"}}}`,
		`{"h":"Authorization: Bearer abcdefabcdef123456"}`,
		`{"l":"password: x"}`,
		`{"l":"aws_secret_access_key = x"}`,
		`{"u":"https://a:b@h"}`,
		`{"t":"` + redacttest.GitHubToken + `"}`,
		`{"j":"` + redacttest.JWT + `"}`,
	} {
		d := auditevent.MustParseData(s)
		_, changed := r.walk(d, nil)
		require.True(t, changed, s)
		assert.True(t, r.mayCut(d.Bytes()), s)
	}
	clean := auditevent.MustParseData(`{"command":["python","-c","print(1)"],"cwd":"/workspace","timeout_s":30.0,"token_file":"/run/t"}`)
	assert.False(t, r.mayCut(clean.Bytes()), "ordinary data skips the walk")
}

// TestDataAuthorizationMember: a data member named Authorization holds a
// header value (headers as a map, or as lists as Go's http.Header has
// them): its credential is cut as in an Authorization line of text.
func TestDataAuthorizationMember(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	d := auditevent.MustParseData(`{"headers":{"Authorization":"Basic ` + redacttest.BasicAuth + `","Proxy-Authorization":["Bearer abc123"],"Accept":"Bearer of news"},` +
		`"env":{"AUTHORIZATION":"` + redacttest.OtherAuth + `"}}`)
	require.True(t, r.MayCut(d))
	var c Counts
	got, changed := r.Data(d, &c)
	require.True(t, changed)
	assert.Equal(t, `{"env":{"AUTHORIZATION":"[REDACTED:authorization]"},"headers":{"Accept":"Bearer of news","Authorization":"Basic [REDACTED:basic_auth]","Proxy-Authorization":["Bearer [REDACTED:bearer_token]"]}}`, got.String())
	assert.Equal(t, 1, c[KindBasicAuth])
	assert.Equal(t, 1, c[KindBearerToken])
	assert.Equal(t, 1, c[KindAuthorization])
	_, changed = r.Data(got, nil)
	assert.False(t, changed)
}

// TestEmptyMatchingAnywhereIsRefused: `\b` matches nothing in "" but an
// empty string beside every word, so as an allow expression it kept every
// secret in clear, and as a pattern it never cut.
func TestEmptyMatchingAnywhereIsRefused(t *testing.T) {
	for _, p := range []string{`\b`, `(?m)$`, `\b|x*`, `(?:\A)`, `\b\B`} {
		err := Validate("p::", auditevent.RedactOverride{Allow: []string{p}, Patterns: []string{p}})
		require.ErrorContains(t, err, fmt.Sprintf("p::patterns[0]: %q can match an empty string", p))
		require.ErrorContains(t, err, fmt.Sprintf("p::allow[0]: %q can match an empty string", p))
	}
	for _, p := range []string{`\bkey\b`, `x+`, `(?m)^secret=(\S+)$`, `a{1,3}\b`} {
		require.NoError(t, Validate("p::", auditevent.RedactOverride{Allow: []string{p}, Patterns: []string{p}}), p)
	}
}

// TestPatternAlternativeWithoutTheGroupCutsItsMatch: the first capture
// group is cut when it takes part in the match; a match of an alternative
// without it (`token=(\S+)|AKIA…`) is cut whole, where nothing was cut.
func TestPatternAlternativeWithoutTheGroupCutsItsMatch(t *testing.T) {
	r := mustNew(t, Settings{Enabled: true, Patterns: []string{`tok=(\w+)|ZZ[0-9]{4}`}})
	got, changed := r.String("tok=abc ZZ1234 done", nil)
	assert.True(t, changed)
	assert.Equal(t, "tok=[REDACTED:custom_pattern] [REDACTED:custom_pattern] done", got)
}
