package redact

import (
	"strings"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// worstLines are long single lines built to make each detector work as
// hard as it can: every trigger repeated with no end in sight.
var worstLines = map[string]string{
	"assignments":   "password=x ",
	"yaml keys":     "\npassword: ",
	"flags":         "--password ",
	"begin lines":   "-----BEGIN RSA PRIVATE KEY-----",
	"begin no end":  "-----BEGIN ",
	"urls":          "https://u:p@",
	"url no at":     "http://aaaaaaaa:",
	"authorization": "Authorization: ",
	"jwt halves":    "eyJhbGciOiJIUzI1NiJ9.",
	"base64":        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
	"markers":       "[REDACTED:x]",
	"pattern hits":  "INTERNAL-493027 [REDACTED:x] ",
	"plain text":    "the quick brown fox jumps over the lazy dog 0123456789 ",
	"digest params": "Authorization: Digest a'",
	"quoted header": ` "X-Api-Key: `,
	"escaped json":  `\"password\":\"\"password\":\"a\\"`,
	"netrc":         "login a password ",
	"xml elements":  "<password>",
	"block scalar":  "password: |\n ",
	"dotted names":  "a.b.c.d.password = ",
	"base64 pem":    "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURBTkJna3Foa2lHOXcwQkFRRUZBQVND\n",
	"colors":        "\x1b[01;31m\x1b[K",
	"slack paths":   "https://hooks.slack.com/services/",
	"tool flags":    "mysql -pX -p ",
}

// BenchmarkLongLine redacts 1 MiB and 4 MiB lines of each worst case: the
// time per byte stays flat when the size quadruples (linear time).
func BenchmarkLongLine(b *testing.B) {
	r, err := New(Settings{Enabled: true, Patterns: []string{redacttest.UserPattern}})
	if err != nil {
		b.Fatal(err)
	}
	for name, unit := range worstLines {
		for _, size := range []int{1 << 20, 4 << 20} {
			line := strings.Repeat(unit, size/len(unit)+1)[:size]
			b.Run(name+"/"+sizeName(size), func(b *testing.B) {
				b.SetBytes(int64(size))
				for b.Loop() {
					r.String(line, nil)
				}
			})
		}
	}
}

func sizeName(n int) string {
	return strings.TrimSuffix(strings.Repeat("", 0)+itoa(n>>20), "") + "MiB"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
