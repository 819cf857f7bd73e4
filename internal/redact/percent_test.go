package redact

import (
	"net/url"
	"strings"
	"testing"

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
