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
	"encoded query": "%3Fpassword%3Dx%26",
	"encoded urls":  "https%3A%2F%2Fa%3A",
	"encoded json":  "%22password%22%3A%22x%5C%22",
	"encoded colon": "%0Apassword%3A%20x",
	"ssh commands":  `ssh h "TOKEN=t ./x"; `,
	"putty headers": "PuTTY-User-Key-" + "File-3: x\nA: b\nAAAA\n",
	"discord paths": "https://discord.com/api/webhooks/1/",
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

// tokenTexts are command output of 64 KiB: clean lines of the words, long
// runs and punctuation agents print (hashes, UUIDs, base64, paths, flags),
// and the same lines with a known-format secret on every fourth. They
// measure the cost of the fixed-format detectors per run.
var tokenTexts = func() map[string]string {
	clean := []string{
		"commit 3f9a1c2b7d4e5f60718293a4b5c6d7e8f9012345 Merge branch 'feature/login-form'",
		"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08  dist/app.tar.gz",
		"request_id=123e4567-e89b-12d3-a456-426614174000 status=200 duration_ms=12 path=/api/v1/items",
		"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
		"drwxr-xr-x  5 agent agent 4096 Dec  7 07:24 node_modules/@types/react-dom/test-utils",
		"go: downloading golang.org/x/sys v0.31.0 github.com/stretchr/testify v1.10.0 --mod=readonly",
		"INFO  [main] org.springframework.boot.SpringApplication - Started ApplicationKt in 3.2 seconds",
		"    at processTicksAndRejections (node:internal/process/task_queues:95:5) dop_v1_ sk_ dapi SG.",
	}
	secrets := []string{
		"export GITHUB=" + redacttest.GitHubToken, "npm set //registry.npmjs.org/ " + redacttest.NPMToken,
		"key " + redacttest.GoogleAPIKey + " and " + redacttest.HFToken, "vault " + redacttest.VaultToken,
		"slack " + redacttest.SlackToken + " " + redacttest.OpenAIKey, "aws " + redacttest.AWSKeyID,
		"gitlab " + redacttest.GitLabToken + " stripe " + redacttest.StripeKey, "pypi " + redacttest.PyPIToken,
	}
	var c, s strings.Builder
	for i := 0; c.Len() < 64<<10; i++ {
		line := clean[i%len(clean)]
		c.WriteString(line + "\n")
		if i%4 == 3 {
			line = secrets[i/4%len(secrets)]
		}
		s.WriteString(line + "\n")
	}
	return map[string]string{"clean": c.String(), "secrets": s.String()}
}()

// BenchmarkTokenText redacts tokenTexts with the default settings.
func BenchmarkTokenText(b *testing.B) {
	r, err := New(DefaultSettings())
	if err != nil {
		b.Fatal(err)
	}
	if got, changed := r.String(tokenTexts["clean"], nil); changed {
		b.Fatalf("clean text cut: %.200q", got)
	}
	for _, name := range []string{"clean", "secrets"} {
		text := tokenTexts[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				r.String(text, nil)
			}
		})
	}
}
