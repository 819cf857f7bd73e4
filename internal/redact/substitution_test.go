package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCommandSubstitutionStays: a secret name's value that runs a command
// ($(cat f), Make's $(shell …), `cat f`) fetches the secret and is not cut,
// as a ${X} reference is not; a token in the command itself still is.
func TestCommandSubstitutionStays(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	assertKept(t, r,
		"TOKEN := $(shell cat secret)\n", "TOKEN=$(cat f)\n", "TOKEN=\"$(cat f)\"\n",
		"export TOKEN=$(cat f) && make\n", "PASSWORD=$(vault kv get -field=pw $(path))\n",
		"TOKEN=`cat f`\n", "  --password \"$(cat /run/pw)\" \\\n", `{"token": "$(cat f)"}`,
	)
	const tok = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
	for _, tc := range []struct{ in, want string }{
		{"TOKEN=$(echo " + tok + ")\n", "TOKEN=$(echo [REDACTED:github_token])\n"},
		{"TOKEN=$(cat f)x\n", "TOKEN=[REDACTED:token]\n"},
		{"TOKEN=$(cat f\n", "TOKEN=[REDACTED:token]\n"},
	} {
		got, _ := r.String(tc.in, nil)
		assert.Equal(t, tc.want, got)
	}
}
