package redact

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// puttyV2RSA is an encrypted version 2 key file, its lines shortened, with
// CRLF line breaks as PuTTYgen writes them on Windows.
var puttyV2RSA = strings.Join([]string{
	"PuTTY-User-Key-" + "File-2: ssh-rsa",
	"Encryption: aes256-cbc",
	"Comment: imported-openssh-key",
	"Public-Lines: 2",
	"AAAAB3NzaC1yc2EAAAADAQABAAABAQC7nJ1k0QmZ2x9Yc4wX8pV3tL6sR5uE1oA2iB4dF7gH0jK3lM6nP9qS",
	"2vW5yZ8bC1eF4hI7kL0mN3",
	"Private-Lines: 3",
	"Vb7Nc4Rk1Jp6Hs5Gd0Fa" + "Ey2Tu9Lm3Xw8Zt1Qp4Ks7Jd0Hb3Gf6Lc9Ya2Ne5Ru8Tq1Wm4Zp7Xr0Vn3Ks6Jd9Hb2",
	"Gf5Lc8Ya1Ne4Ru7Tq0Wm3" + "Zp6Xr9Vn2Ks5Jd8Hb1Gf4Lc7Ya0Ne3Ru6Tq9Wm2Zp5Xr8Vn1Ks4Jd7Hb0Gf3Lc6",
	"Ya9Ne2Ru5Tq8Wm1Zp4Xr" + "7Vn0Ks3Jd6Hb9Gf2Lc5Ya8Ne1Ru4=",
	"Private-MAC: 5c4b3a2918f7e6d5c4b3a2918f7e6d5c4b3a2918",
	"",
}, "\r\n")

// TestPuTTYPrivateKey: the private lines of a PuTTY key file (.ppk),
// versions 2 and 3, encrypted or not, are cut; its header, comment, public
// lines and MAC stay. A file cut short is cut to where its private lines
// stop; one escaped in JSON text is read across its escaped line breaks.
func TestPuTTYPrivateKey(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	v3 := redacttest.PuTTYKey
	want3 := strings.Replace(v3, redacttest.PuTTYPrivate, "[REDACTED:putty_private_key]", 1)
	assertCountedCuts(t, r, []countedCut{
		{"$ cat id.ppk\n" + v3 + "$ ", "$ cat id.ppk\n" + want3 + "$ ", 1},
		{v3[:strings.Index(v3, "Private-MAC")-1], want3[:strings.Index(want3, "Private-MAC")-1], 1},
	})
	var c Counts
	got, _ := r.String(puttyV2RSA, &c)
	assert.Equal(t, 1, c[KindPuTTYPrivateKey])
	assert.NotContains(t, got, "Vb7Nc4Rk1Jp6Hs5Gd0Fa")
	assert.NotContains(t, got, "Gf5Lc8Ya1Ne4Ru7Tq0Wm3")
	assert.NotContains(t, got, "Ya9Ne2Ru5Tq8Wm1Zp4Xr")
	assert.Contains(t, got, "Private-Lines: 3\r\n[REDACTED:putty_private_key]\r\nPrivate-MAC: ")
	assert.Contains(t, got, "2vW5yZ8bC1eF4hI7kL0mN3\r\nPrivate-Lines", "public lines stay")

	// JSON text with escaped line breaks, as a tool prints a file's text
	escaped := strings.ReplaceAll(puttyV2RSA, "\r\n", `\r\n`)
	got, _ = r.String(`{"content":"`+escaped+`"}`, nil)
	assert.NotContains(t, got, "Vb7Nc4Rk1Jp6Hs5Gd0Fa")
	assert.NotContains(t, got, "Ya9Ne2Ru5Tq8Wm1Zp4Xr")
	assert.Contains(t, got, `Private-Lines: 3\r\n[REDACTED:putty_private_key]\r\nPrivate-MAC: `)

	assertData(t, r, []dataCase{{`{"data":` + jsonString(v3) + `,"path":"/home/u/.ssh/id.ppk"}`,
		`{"data":` + jsonString(want3) + `,"path":"/home/u/.ssh/id.ppk"}`}})
	assertKept(t, r,
		"PuTTY-User-Key-"+"File-3: ssh-ed25519\nEncryption: none\nComment: k\nPublic-Lines: 1\nAAAAC3NzaC1lZDI1NTE5AAAAIK\n",
		"PuTTY-User-Key-"+"File-3: ssh-ed25519\nsee the manual\nPrivate-Lines: 1\nAAAAIG9k\n",
		"PuTTY-User-Key-"+"File-3: ssh-ed25519\nPrivate-Lines: 1\n",
		"the PuTTY-User-Key-"+"File-2: header starts a .ppk file; Private-Lines: 2 follows",
		"Private-Lines: 1\nAAAAIG9kZ2Vfc2VjcmV0X2tleV9ieXRlc19oZXJl\n",
	)
}

// jsonString quotes s as a JSON string, line breaks escaped.
func jsonString(s string) string {
	return `"` + strings.NewReplacer("\n", `\n`, "\r", `\r`, `"`, `\"`).Replace(s) + `"`
}

// TestIndentedPuTTYPrivateKey: a key file in a YAML block scalar (an
// Ansible variable, a Kubernetes secret's stringData) has its lines
// indented; its private lines are cut, as a PEM block's are.
func TestIndentedPuTTYPrivateKey(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	indent := func(s string) string {
		return strings.TrimSuffix(strings.ReplaceAll("  "+s, "\n", "\n  "), "  ")
	}
	v3 := redacttest.PuTTYKey
	want3 := strings.Replace(v3, redacttest.PuTTYPrivate, "[REDACTED:putty_private_key]", 1)
	assertCountedCuts(t, r, []countedCut{
		{"ppk: |\n" + indent(v3) + "user: me\n", "ppk: |\n" + indent(want3) + "user: me\n", 1},
		{"ppk: |\n\t" + strings.ReplaceAll(strings.TrimSuffix(v3, "\n"), "\n", "\n\t"),
			"ppk: |\n\t" + strings.ReplaceAll(strings.TrimSuffix(want3, "\n"), "\n", "\n\t"), 1},
	})
	got, _ := r.String(strings.ReplaceAll(indent(puttyV2RSA), "  \r\n", "\r\n"), nil)
	assert.NotContains(t, got, "Vb7Nc4Rk1Jp6Hs5Gd0Fa")
	assert.NotContains(t, got, "Gf5Lc8Ya1Ne4Ru7Tq0Wm3")
	assert.NotContains(t, got, "Ya9Ne2Ru5Tq8Wm1Zp4Xr")
}
