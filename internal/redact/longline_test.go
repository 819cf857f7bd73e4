package redact

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// TestHostileLongText feeds a few MiB of each rule's trigger, repeated
// without a break, and checks every repetition is cut as one alone is: a
// rule that looked past its own line or value would cut across units or
// fail to end in time.
func TestHostileLongText(t *testing.T) {
	if testing.Short() {
		t.Skip("a few MiB per case")
	}
	r := mustNew(t, DefaultSettings())
	for _, tc := range []struct{ unit, want string }{
		{"machine h login u password hunter2x\n", "machine h login u password [REDACTED:password]\n"},
		{`curl -H 'X-Api-Key: k3y' `, `curl -H 'X-Api-Key: [REDACTED:api_key]' `},
		{`curl -H "X-Api-Key: \"k\"" `, `curl -H "X-Api-Key: [REDACTED:api_key]" `},
		{`\"password\":\"p\\\"w\",`, `\"password\":\"[REDACTED:password]\",`},
		{"f.yml:1:  token: t0k\n", "f.yml:1:  token: [REDACTED:token]\n"},
		{"<password>pw1</password>", "<password>[REDACTED:password]</password>"},
		{"<password> ", "<password> "},
		{"https://hooks.slack.com/services/T1/B1/sec ", "https://hooks.slack.com/services/T1/B1/[REDACTED:slack_token] "},
		{"https://hooks.slack.com/services/", "https://hooks.slack.com/services/"},
		{"password: |\n  pw\n", "password: |\n  [REDACTED:password]\n"},
		{"a.b.password = pw\n", "a.b.password = [REDACTED:password]\n"},
		{"x auth=YWxhZGRpbjpvcGVuc2VzYW1l ", "x auth=[REDACTED:basic_auth] "},
		{"Authorization: Digest a=1'", "Authorization: Digest [REDACTED:authorization]'"},
		{`x token := "t0k" `, `x token := "[REDACTED:token]" `},
		{"x token := `t0k` ", "x token := `[REDACTED:token]` "},
		{`f({password: 'pw', `, `f({password: '[REDACTED:password]', `},
		{`const apiKey = "k" `, `const apiKey = "[REDACTED:api_key]" `},
		{"password = getpass()\n", "password = getpass()\n"},
		{"TOKEN := t\n", "TOKEN := [REDACTED:token]\n"},
		{"Cookie: a=1; b=2; c\n", "Cookie: a=[REDACTED:cookie]; b=[REDACTED:cookie]; c\n"},
		{"Set-Cookie: a=1; Path=/; a=1 ", "Set-Cookie: a=[REDACTED:cookie]; Path=/; a=1 "},
		{`curl -b "a=1;b=2" -b f `, `curl -b "a=[REDACTED:cookie];b=[REDACTED:cookie]" -b f `},
		{"curl -bsid=1 ", "curl -bsid=[REDACTED:cookie] "},
		{"mysql -pX -p -u a:b ", "mysql -p[REDACTED:password] -p -u a:b "},
		{"curl -u a:b -p x ", "curl -u a:[REDACTED:password] -p x "},
		{"config set --x password pw ", "config set --x password [REDACTED:password] "},
		{"%3Fpassword%3Dpw%26", "%3Fpassword%3D[REDACTED:password]%26"},
		{"q=token%253Dt%2526", "q=token%253D[REDACTED:token]%2526"},
		{"https%3A%2F%2Fa%3Ab%40h%2F", "https%3A%2F%2Fa%3A[REDACTED:url_password]%40h%2F"},
		{"https%3A%2F%2Fa%3A", "https%3A%2F%2Fa%3A"},
		{"?sv=1&sig=a%2Bb ", "?sv=1&sig=[REDACTED:token] "},
		{"%70assword%3Dpw%26", "%70assword%3D[REDACTED:password]%26"},
		{"pass%77ord=pw&", "pass%77ord=[REDACTED:password]&"},
		{"%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%3D", "%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%3D"},
		{"%22password%22%3A%22p%5C%22w%22%2C", "%22password%22%3A%22[REDACTED:password]%22%2C"},
		{"%22password%22%3A%22", "%22password%22%3A%22"},
		{"%22x%22%3A%22", "%22x%22%3A%22"},
		{"%0Apassword%3A%20pw", "%0Apassword%3A%20[REDACTED:password]"},
		{"%2C%20password%3A%20%22pw%22)", "%2C%20password%3A%20%22[REDACTED:password]%22)"},
		{"x%20%20password%3A%20", "x%20%20password%3A%20"},
		{"%3Fsv%3D1%26sig%3Da%252Bb%26", "%3Fsv%3D1%26sig%3D[REDACTED:token]%26"},
		{"%26sig%3D", "%26sig%3D"},
		{"Authorization%3A%20Bearer%20t0k%26", "Authorization%3A%20Bearer%20[REDACTED:bearer_token]%26"},
		{"Cookie%3A%20a%3D1%3B%20b%3D2%26", "Cookie%3A%20a%3D[REDACTED:cookie]%3B%20b%3D[REDACTED:cookie]%26"},
		{"&sv=1&sig=a&sig=", "&sv=1&sig=[REDACTED:token]&sig="},
		{"go -bench=. ", "go -bench=. "},
		{"Cookie: Cookie: a", "Cookie: Cookie: a"},
		{`Cookie: a="b c", d=e `, `Cookie: a="[REDACTED:cookie]", d=[REDACTED:cookie] `},
		{`Cookie: a="b `, `Cookie: a="[REDACTED:cookie] `},
		{"x TOKEN=$(cat f) ", "x TOKEN=$(cat f) "},
		{`x = {"password": get_pw()} `, `x = {"password": get_pw()} `},
		{"password=f(x)", "password=f(x)"},
		{"password=f()", "password=f()"},
		{`token = f("ghp_` + strings.Repeat("a", 36) + `")` + "\n", `token = f("[REDACTED:github_token]")` + "\n"},
		{"\x1b[01;31m\x1b[Kghp_" + strings.Repeat("a", 36) + " ", "\x1b[01;31m\x1b[K[REDACTED:github_token] "},
		{`ssh h "TOKEN=t ./x"; `, `ssh h "TOKEN=[REDACTED:token] ./x"; `},
		{`x "TOKEN=t u" `, `x "TOKEN=[REDACTED:token]" `},
		{`git -c "a.password=p w" x; `, `git -c "a.password=[REDACTED:password]" x; `},
		{"cd /s; PWD=/tmp make; ", "cd /s; PWD=/tmp make; "},
		{"Uid=sa;Pwd=pw;", "Uid=sa;Pwd=[REDACTED:password];"},
		{"h:5432:db:u:pw\n", "h:5432:db:u:[REDACTED:password]\n"},
		{"https://discord.com/api/webhooks/1/t ", "https://discord.com/api/webhooks/1/[REDACTED:discord_webhook] "},
		{"https://discord.com/api/webhooks/", "https://discord.com/api/webhooks/"},
		{redacttest.PuTTYKey, strings.Replace(redacttest.PuTTYKey, redacttest.PuTTYPrivate, "[REDACTED:putty_private_key]", 1)},
		{"PuTTY-User-Key-" + "File-3: x\n", "PuTTY-User-Key-" + "File-3: x\n"},
		{"PuTTY-User-Key-" + "File-3: x\nA: b\nAAAA\n", "PuTTY-User-Key-" + "File-3: x\nA: b\nAAAA\n"},
	} {
		n := hostileSize / len(tc.unit)
		got, _ := r.String(strings.Repeat(tc.unit, n), nil)
		if want := strings.Repeat(tc.want, n); got != want {
			assert.Fail(t, "long text cut wrong", "unit %q: first difference at byte %d", tc.unit, firstDiff(got, want))
		}
	}
}

// hostileSize is the size of each hostile text.
const hostileSize = 3 << 20

func firstDiff(a, b string) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
