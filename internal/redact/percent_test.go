package redact

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// encodedForms are URLs inside a query parameter, percent-encoded once or
// twice, as agents print them in curl -v output, redirects and OAuth
// flows, and what redaction makes of each.
var encodedForms = []struct{ name, in, want string }{
	{"encoded query", "next=%2Flogin%3Fpassword%3D" + redacttest.Password + "%26user%3Dbob",
		"next=%2Flogin%3Fpassword%3D[REDACTED:password]%26user%3Dbob"},
	{"encoded URL", "redirect_uri=https%3A%2F%2Fx%3Fapi_key%3D" + redacttest.APIKey,
		"redirect_uri=https%3A%2F%2Fx%3Fapi_key%3D[REDACTED:api_key]"},
	{"lower-case hex", "next=%2fcb%3faccess_token%3d" + redacttest.APIKey + "%26a%3d1",
		"next=%2fcb%3faccess_token%3d[REDACTED:token]%26a%3d1"},
	{"encoded twice", "q=token%253D" + redacttest.APIKey, "q=token%253D[REDACTED:token]"},
	{"encoded twice in a query", "u=%252Fcb%253Fclient_secret%253D" + redacttest.APIKey + "%2526x%253D1",
		"u=%252Fcb%253Fclient_secret%253D[REDACTED:secret]%2526x%253D1"},
	{"encoded twice after an encoded ?", "u=%252Fcb%253Fapi_key%253D" + redacttest.APIKey, "u=%252Fcb%253Fapi_key%253D[REDACTED:api_key]"},
	{"plain & after the value", "next=%2Fcb%3Fpassword%3D" + redacttest.Password + "&lang=en",
		"next=%2Fcb%3Fpassword%3D[REDACTED:password]&lang=en"},
	{"encoded blank after the value", "q=password%3D" + redacttest.Password + "%20and%20more",
		"q=password%3D[REDACTED:password]%20and%20more"},
	{"encoded quotes around the value", "q=password%3D%22" + redacttest.Password + "%22",
		"q=password%3D%22[REDACTED:password]%22"},
	{"encoded byte inside the value", "q=password%3Dp%40ss%2Bw0rd%26x%3D1", "q=password%3D[REDACTED:password]%26x%3D1"},
	{"known format as the value", "q=token%3D" + redacttest.GitHubToken, "q=token%3D[REDACTED:github_token]"},
	{"encoded userinfo", "url=https%3A%2F%2Falice%3A" + redacttest.URLPassword + "%40git.example.com%2Fr.git",
		"url=https%3A%2F%2Falice%3A[REDACTED:url_password]%40git.example.com%2Fr.git"},
	{"userinfo encoded twice", "url=https%253A%252F%252Falice%253A" + redacttest.URLPassword + "%2540host",
		"url=https%253A%252F%252Falice%253A[REDACTED:url_password]%2540host"},
}

// TestPercentEncodedNameValue: a secret name's value and a URL's password
// are cut when the URL around them is percent-encoded, in exec output, an
// argv element and a data member.
func TestPercentEncodedNameValue(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, tc := range encodedForms {
		t.Run(tc.name, func(t *testing.T) {
			out := "< HTTP/1.1 302 Found\n< Location: https://idp.example.com/authorize?" + tc.in + "\n* done"
			assertCountedCuts(t, r, []countedCut{
				{tc.in, tc.want, 1},
				{out, strings.Replace(out, tc.in, tc.want, 1), 1},
			})
			assertData(t, r, []dataCase{
				{`{"command":["curl","-v","https://h/cb?` + tc.in + `"]}`, `{"command":["curl","-v","https://h/cb?` + tc.want + `"]}`},
				{`{"url":"https://h/cb?` + tc.in + `"}`, `{"url":"https://h/cb?` + tc.want + `"}`},
			})
		})
	}
}

// TestPercentEncodedURLAloneInData: a data object whose only trigger is
// an encoded URL's "://" is not ruled out before the walk.
func TestPercentEncodedURLAloneInData(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	assertData(t, r, []dataCase{
		{`{"next":"https%3A%2F%2Fbob%3Ahunter2%40h"}`, `{"next":"https%3A%2F%2Fbob%3A[REDACTED:url_password]%40h"}`},
		{`{"next":"https%253A%252F%252Fbob%253Ahunter2%2540h"}`, `{"next":"https%253A%252F%252Fbob%253A[REDACTED:url_password]%2540h"}`},
	})
}

// TestPercentEncodedNearMisses: an encoded name is judged as its plain
// form is; a value that only names the secret, and a URL without a
// password, are not cut.
func TestPercentEncodedNearMisses(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	kept := []string{
		"next=%2Fcb%3Fuser%3Dbob%26lang%3Den",
		"q=passwordless%3Dtrue", "q=password_length%3D8", "q=SECRET_NAME%3Dprod-db", "q=token_file%3D%2Ftmp%2Fx",
		"q=max_tokens%3D512", "q=password%3D%24DB_PASSWORD", "q=password%3D",
		"url=https%3A%2F%2Fgit.example.com%2Fr.git", "url=https%3A%2F%2Falice%40host%2Fx", "url=https%3A%2F%2Fhost%3A8443%2Fx",
		"100%3Dpercent", "token%3",
	}
	for _, s := range kept {
		plain, err := url.PathUnescape(s)
		if err == nil {
			assertKept(t, r, plain) // the plain form stays too
		}
	}
	assertKept(t, r, kept...)
	d := `{"command":["curl","https://h/?next=%2Fcb%3Fpassword_length%3D8"],"url":"https%3A%2F%2Fhost%3A8443"}`
	assertData(t, r, []dataCase{{d, d}})
}

// TestPercentEncodedFirstByte: a value that starts with an encoded
// punctuation byte (a form-encoded password "+…" or "!…") is cut; only an
// encoded '$' or '%' starts a reference that stays, as %VAR% does.
func TestPercentEncodedFirstByte(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	const pw = "hunter2" + "Xq9z" // letters and digits only, as a reference's name
	assertCountedCuts(t, r, []countedCut{
		{"https://h/login?user=bob&password=%2B" + pw + "&x=1",
			"https://h/login?user=bob&password=[REDACTED:password]&x=1", 1},
		{"q=password%3D%21" + pw + "%26x%3D1", "q=password%3D[REDACTED:password]%26x%3D1", 1},
		{"q=password%253D%2540" + pw, "q=password%253D[REDACTED:password]", 1},
	})
	assertKept(t, r, "password=%APPDATA%", "password=%DB_PASS%", "q=password%3D%24DB_PASSWORD",
		"q=password%3D%2524DB_PASSWORD", "password=%25",
		"password=%20", "password=%22%22")
}

// TestPercentEncodedNameLetters: a secret name with a letter
// percent-encoded, once, twice or three times, is judged decoded, as its
// plain form is, before a plain or an encoded '='.
func TestPercentEncodedNameLetters(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	pw := redacttest.Password
	cases := []struct{ in, want string }{
		{"q=%70assword%3D" + pw, "q=%70assword%3D[REDACTED:password]"},
		{"q=pass%77ord=" + pw + "&x=1", "q=pass%77ord=[REDACTED:password]&x=1"},
		{"q=pass%77ord%3D" + pw + "%26x%3D1", "q=pass%77ord%3D[REDACTED:password]%26x%3D1"},
		{"%70assword=" + pw, "%70assword=[REDACTED:password]"},
		{"next=%2Fcb%3F%70assword%3D" + pw + "%26a%3D1", "next=%2Fcb%3F%70assword%3D[REDACTED:password]%26a%3D1"},
		{"q=%2570a%2573sword%253D" + pw, "q=%2570a%2573sword%253D[REDACTED:password]"},
		{"q=%61pi%5Fkey%3D" + redacttest.APIKey, "q=%61pi%5Fkey%3D[REDACTED:api_key]"},
		{"q=%54OKEN%3D" + redacttest.GitHubToken, "q=%54OKEN%3D[REDACTED:github_token]"},
	}
	for _, tc := range cases {
		assertCountedCuts(t, r, []countedCut{{tc.in, tc.want, 1}})
		assertData(t, r, []dataCase{{`{"u":"` + tc.in + `"}`, `{"u":"` + tc.want + `"}`}})
	}
	// names that say no secret stay, decoded as plain: padding, password_length
	kept := []string{"q=password_length%3D8", "%70adding", "q=%70adding%3D8", "q=pass%77ord_length%3D8",
		"q=%70asswordless%3Dtrue", "q=%70assword%3D%24DB_PASSWORD", "50%dapi", "%41%42%43", "%E2%80%99"}
	assertKept(t, r, kept...)
	for _, k := range kept {
		d := `{"u":"` + k + `"}`
		assertData(t, r, []dataCase{{d, d}})
	}
}

// TestPercentEncodedHeaders: the credentials of an Authorization, Cookie
// or Set-Cookie header in an encoded query (a header passed as a
// parameter, a logged form) are cut as in the plain header.
func TestPercentEncodedHeaders(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	tok, ck := redacttest.BearerToken, "Qx7vR2mK9pL4tZ"
	cases := []struct {
		in, want string
		cuts     int
	}{
		{"h=Authorization%3A%20Bearer%20" + tok + "%26x%3D1", "h=Authorization%3A%20Bearer%20[REDACTED:bearer_token]%26x%3D1", 1},
		{"h=authorization%3A+Bearer+" + tok, "h=authorization%3A+Bearer+[REDACTED:bearer_token]", 1},
		{"h=Authorization%253A%2520Bearer%2520" + tok, "h=Authorization%253A%2520Bearer%2520[REDACTED:bearer_token]", 1},
		{"h=Proxy-Authorization%3A%20Basic%20" + redacttest.RegistryAuth[:12] + "%3D",
			"h=Proxy-Authorization%3A%20Basic%20[REDACTED:basic_auth]", 1},
		{"h=Authorization%3A%20" + tok, "h=Authorization%3A%20[REDACTED:authorization]", 1},
		{"h=Cookie%3A%20sid%3D" + ck + "%3B%20theme%3Ddark&x=1", "h=Cookie%3A%20sid%3D[REDACTED:cookie]%3B%20theme%3D[REDACTED:cookie]&x=1", 2},
		{"h=Set-Cookie%3A%20sid%3D" + ck + "%3B%20Path%3D%2F%3B%20HttpOnly", "h=Set-Cookie%3A%20sid%3D[REDACTED:cookie]%3B%20Path%3D%2F%3B%20HttpOnly", 1},
		{"h=Cookie%253A%2520sid%253D" + ck, "h=Cookie%253A%2520sid%253D[REDACTED:cookie]", 1},
	}
	for _, tc := range cases {
		assertCountedCuts(t, r, []countedCut{{tc.in, tc.want, tc.cuts}})
		assertData(t, r, []dataCase{{`{"u":"` + tc.in + `"}`, `{"u":"` + tc.want + `"}`}})
	}
	assertKept(t, r, "h=Authorization%3A%20Bearer", "h=Cookie%3A%20none", "h=Accept%3A%20text%2Fhtml")
}

// TestPercentEncodedHeadersQuoted: a quoted cookie value or Authorization
// value, its quotes encoded, is cut as the plain quoted one is; the quotes
// stay.
func TestPercentEncodedHeadersQuoted(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	tok, ck := redacttest.BearerToken, "Qx7vR2mK9pL4tZ"
	cases := []countedCut{
		{"h=Cookie%3A%20sid%3D%22" + ck + "%22%3B%20theme%3D%22" + ck + "%22",
			"h=Cookie%3A%20sid%3D%22[REDACTED:cookie]%22%3B%20theme%3D%22[REDACTED:cookie]%22", 2},
		{"h=Set-Cookie%3A%20sid%3D%22" + ck + "%22%3B%20Path%3D%2F", "h=Set-Cookie%3A%20sid%3D%22[REDACTED:cookie]%22%3B%20Path%3D%2F", 1},
		{"h=Cookie%253A%2520sid%253D%2522" + ck + "%2522", "h=Cookie%253A%2520sid%253D%2522[REDACTED:cookie]%2522", 1},
		{"h=Authorization%3A%20%22Bearer%20" + tok + "%22", "h=Authorization%3A%20%22Bearer%20[REDACTED:bearer_token]%22", 1},
	}
	assertCountedCuts(t, r, cases)
	for _, tc := range cases {
		assertData(t, r, []dataCase{{`{"u":"` + tc.in + `"}`, `{"u":"` + tc.want + `"}`}})
	}
}

// TestPercentEncodedTokenScheme: an encoded Authorization header of the
// token scheme loses its credential alone, as the plain header does; the
// query's later parameters stay.
func TestPercentEncodedTokenScheme(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	tok := redacttest.BearerToken
	assertCountedCuts(t, r, []countedCut{
		{"h=Authorization%3A%20token%20" + tok + "%26x%3D1", "h=Authorization%3A%20token%20[REDACTED:authorization]%26x%3D1", 1},
		{"Authorization: token " + tok + "&x=1", "Authorization: token [REDACTED:authorization]&x=1", 1},
	})
}

// TestPercentEncodedSASSignature: the sig of an Azure SAS inside an
// encoded URL (%26sig%3D…, sv%3D before it) is cut as in a plain URL;
// without sv it stays.
func TestPercentEncodedSASSignature(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	const sig = "lVxGm7Q2" + "kT9pR4w"
	for _, tc := range []struct{ in, want string }{
		{"u=https%3A%2F%2Fa.blob.core.windows.net%2Fc%2Fb%3Fsv%3D2022-11-02%26se%3D2030%26sig%3D" + sig + "%252Bx%253D%26x%3D1",
			"u=https%3A%2F%2Fa.blob.core.windows.net%2Fc%2Fb%3Fsv%3D2022-11-02%26se%3D2030%26sig%3D[REDACTED:token]%26x%3D1"},
		{"u=https%253A%252F%252Fa.blob.core.windows.net%252Fc%253Fsv%253D2022-11-02%2526sig%253D" + sig,
			"u=https%253A%252F%252Fa.blob.core.windows.net%252Fc%253Fsv%253D2022-11-02%2526sig%253D[REDACTED:token]"},
		{"q=c%3Fsv%3D2022%26sig%3DXk9%2Bq7Z%3D", "q=c%3Fsv%3D2022%26sig%3D[REDACTED:token]"}, // no other trigger
	} {
		assertCountedCuts(t, r, []countedCut{{tc.in, tc.want, 1}})
		assertData(t, r, []dataCase{{`{"u":"` + tc.in + `"}`, `{"u":"` + tc.want + `"}`}})
	}
	assertKept(t, r, "q=c%3Fse%3D2022%26sig%3D"+sig, "q=c%3Fsv%3D2022%26xsig%3D"+sig)
}

// TestPercentEncodedThreeTimes: a query encoded three times (%25253D) is
// read as once or twice.
func TestPercentEncodedThreeTimes(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	assertCountedCuts(t, r, []countedCut{
		{"q=password%25253D" + redacttest.Password + "%252526x", "q=password%25253D[REDACTED:password]%252526x", 1},
		{"q=x%25253D" + redacttest.GitHubToken, "q=x%25253D[REDACTED:github_token]", 1},
		{"u=https%25253A%25252F%25252Fbob%25253A" + redacttest.URLPassword + "%252540h",
			"u=https%25253A%25252F%25252Fbob%25253A[REDACTED:url_password]%252540h", 1},
	})
	assertKept(t, r, "q=password_length%25253D8")
}

// TestPercentEncodedJSONMember: JSON inside an encoded query or form body
// (a GraphQL GET request's variables, an OAuth state blob) loses a secret
// member's value, as the plain JSON text does; the name is judged as in
// its plain form.
func TestPercentEncodedJSONMember(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	pw, key := redacttest.Password, redacttest.APIKey
	cases := []countedCut{
		{"variables=%7B%22password%22%3A%22" + pw + "%22%7D", "variables=%7B%22password%22%3A%22[REDACTED:password]%22%7D", 1},
		{"state=%7B%22api_key%22%3A%20%22" + key + "%22%2C%22n%22%3A1%7D",
			"state=%7B%22api_key%22%3A%20%22[REDACTED:api_key]%22%2C%22n%22%3A1%7D", 1},
		{"state=%7b%22client_secret%22%3a+%22" + pw + "%22%7d", "state=%7b%22client_secret%22%3a+%22[REDACTED:secret]%22%7d", 1},
		{"v=%257B%2522password%2522%253A%2522" + pw + "%2522%257D", "v=%257B%2522password%2522%253A%2522[REDACTED:password]%2522%257D", 1},
		{"v=%7B%22password%22:%22" + pw + "%22%7D", "v=%7B%22password%22:%22[REDACTED:password]%22%7D", 1}, // encodeURI keeps ':'
		{"v=%7B%22password%22%3A%22a%5C%22b" + pw + "%22%7D", "v=%7B%22password%22%3A%22[REDACTED:password]%22%7D", 1},
		{"v=%7B%22pin%22%3A1%2C%22password%22%3A12345678%7D", "v=%7B%22pin%22%3A1%2C%22password%22%3A[REDACTED:password]%7D", 1},
		{"v=%7B%22%70assword%22%3A%22" + pw + "%22%7D", "v=%7B%22%70assword%22%3A%22[REDACTED:password]%22%7D", 1},
		{"v=%7B%22Authorization%22%3A%22Bearer%20" + redacttest.BearerToken + "%22%7D",
			"v=%7B%22Authorization%22%3A%22Bearer%20[REDACTED:bearer_token]%22%7D", 1},
		{"v=%7B%22auth%22%3A%22" + url.QueryEscape(redacttest.RegistryAuth) + "%22%7D", "v=%7B%22auth%22%3A%22[REDACTED:basic_auth]%22%7D", 1},
	}
	assertCountedCuts(t, r, cases)
	for _, tc := range cases {
		plain, err := url.PathUnescape(tc.in)
		require.NoError(t, err)
		if strings.Contains(tc.in, "%25") {
			plain, err = url.PathUnescape(plain)
			require.NoError(t, err)
		}
		got, changed := r.String(plain, nil)
		assert.True(t, changed, "the plain form %q is cut too: %q", plain, got)
		assertData(t, r, []dataCase{
			{`{"u":"` + tc.in + `"}`, `{"u":"` + tc.want + `"}`},
			{`{"command":["curl","-v","https://h/graphql?` + tc.in + `"]}`, `{"command":["curl","-v","https://h/graphql?` + tc.want + `"]}`},
		})
	}
	kept := []string{
		"v=%7B%22password_length%22%3A8%7D", "v=%7B%22token_file%22%3A%22%2Ftmp%2Fx%22%7D", "v=%7B%22max_tokens%22%3A512%7D",
		"v=%7B%22password%22%3A%22%24DB_PASSWORD%22%7D", "v=%7B%22password%22%3Anull%7D", "v=%7B%22password%22%3A%22%22%7D",
		"v=the%20%22pageToken%22%3A%20A%20page%20token", "v=%22password%22%20is%20required", "v=%7B%22auth%22%3A%22dXNlcg%3D%3D%22%7D",
	}
	assertKept(t, r, kept...)
	for _, k := range kept {
		d := `{"u":"` + k + `"}`
		assertData(t, r, []dataCase{{d, d}})
	}
}

// TestPercentEncodedColon: a secret name before an encoded ':' is cut
// where the plain "name: value" is: at the start of the decoded text (a
// parameter's value, after an encoded line break), the rest of its line;
// as an object's member (a GraphQL query's arguments), a quoted value.
func TestPercentEncodedColon(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	pw := redacttest.Password
	cases := []countedCut{
		{"password%3A" + pw, "password%3A[REDACTED:password]", 1},
		{"q=token%3A%20" + redacttest.APIKey + "&x=1", "q=token%3A%20[REDACTED:token]&x=1", 1},
		{"q=token%3A%20" + redacttest.GitHubToken, "q=token%3A%20[REDACTED:github_token]", 1},
		{"body=a%3A%201%0Apassword%3A%20correct%20horse%0Ab%3A%202", "body=a%3A%201%0Apassword%3A%20[REDACTED:password]%0Ab%3A%202", 1},
		{"q=%22X-Api-Key%3A%20" + pw + "%22%20-v", "q=%22X-Api-Key%3A%20[REDACTED:api_key]%22%20-v", 1},
		{"q=password%253A%2520" + pw + "%2526x%253D1", "q=password%253A%2520[REDACTED:password]%2526x%253D1", 1},
		{"q=%70assword%3A" + pw, "q=%70assword%3A[REDACTED:password]", 1},
		{"q=auth%3A%20" + url.QueryEscape(redacttest.RegistryAuth), "q=auth%3A%20[REDACTED:basic_auth]", 1},
		{"q=x%20apiKey%3A%3D%20%22" + pw + "%22", "q=x%20apiKey%3A%3D%20%22[REDACTED:api_key]%22", 1},
		{"query=mutation%20%7Blogin(user%3A%20%22bob%22%2C%20password%3A%20%22" + pw + "%22)%7D",
			"query=mutation%20%7Blogin(user%3A%20%22bob%22%2C%20password%3A%20%22[REDACTED:password]%22)%7D", 1},
	}
	assertCountedCuts(t, r, cases)
	for _, tc := range cases {
		assertData(t, r, []dataCase{
			{`{"u":"` + tc.in + `"}`, `{"u":"` + tc.want + `"}`},
			{`{"command":["curl","-v","https://h/x?` + tc.in + `"]}`, `{"command":["curl","-v","https://h/x?` + tc.want + `"]}`},
		})
	}
	// as in plain text: a name inside a sentence, one that says no secret,
	// a reference, code
	kept := []string{
		"q=error%3A%20bad%20password%3A%20too%20short", "q=password_length%3A8", "q=passwordless%3Atrue",
		"q=password%3A%24DB_PASSWORD", "q=password%3A", "q=x%20password%3A%3Dgetpass()", "query=%7Blogin(password%3A%20getpass())%7D",
	}
	assertEncodedKept(t, r, kept...)
}

// TestPercentEncodedBlankBeforeEquals: an encoded "name = value" (a form
// body's or a query's password%20%3D%20…) is cut as the plain one is: at
// the start of the decoded text, the rest of its line; in code, a quoted
// value only; "==" is a comparison.
func TestPercentEncodedBlankBeforeEquals(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	pw := redacttest.Password
	cases := []countedCut{
		{"q=password%20%3D%20" + pw, "q=password%20%3D%20[REDACTED:password]", 1},
		{"q=password%20%3D%20" + pw + "&x=1", "q=password%20%3D%20[REDACTED:password]&x=1", 1},
		{"q=password%20%3D" + pw + "%26x%3D1", "q=password%20%3D[REDACTED:password]%26x%3D1", 1},
		{"body=a%3D1%0Apassword%20%3D%20" + pw + "%0Ab%3D2", "body=a%3D1%0Apassword%20%3D%20[REDACTED:password]%0Ab%3D2", 1},
		{"q=%70assword%09%3D%09" + pw, "q=%70assword%09%3D%09[REDACTED:password]", 1},
		{"q=password%2520%253D%2520" + pw + "%2526x%253D1", "q=password%2520%253D%2520[REDACTED:password]%2526x%253D1", 1},
		{"q=token%20%3D%20" + redacttest.GitHubToken, "q=token%20%3D%20[REDACTED:github_token]", 1},
		{"q=const%20apiKey%20%3D%20%22" + pw + "%22%3B", "q=const%20apiKey%20%3D%20%22[REDACTED:api_key]%22%3B", 1},
	}
	assertCountedCuts(t, r, cases)
	for _, tc := range cases {
		assertData(t, r, []dataCase{
			{`{"u":"` + tc.in + `"}`, `{"u":"` + tc.want + `"}`},
			{`{"command":["curl","-d","` + tc.in + `","https://h/x"]}`, `{"command":["curl","-d","` + tc.want + `","https://h/x"]}`},
		})
	}
	kept := []string{
		"q=if%20password%20%3D%3D%20" + pw, "q=x%20password%20%3D%20getpass()", "q=password_length%20%3D%208",
		"q=password%20%3D%20%24DB_PASSWORD", "q=password%20%3D%20", "q=password%20is%20" + pw,
	}
	assertEncodedKept(t, r, kept...)
}

// assertEncodedKept checks that redaction leaves each encoded text as it
// is: decoded (a leading "q=" dropped), encoded, and as a data value.
func assertEncodedKept(t *testing.T, r *Redactor, kept ...string) {
	t.Helper()
	for _, k := range kept {
		plain, err := url.PathUnescape(strings.TrimPrefix(k, "q="))
		require.NoError(t, err)
		assertKept(t, r, plain)
	}
	assertKept(t, r, kept...)
	for _, k := range kept {
		d := `{"u":"` + k + `"}`
		assertData(t, r, []dataCase{{d, d}})
	}
}
