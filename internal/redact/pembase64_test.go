package redact

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/redacttest"
)

// TestBase64PEMPrivateKey: Kubernetes secrets (tls.key) and kubeconfig
// (client-key-data) hold private keys as base64 of the PEM block; they are
// cut, on one line or wrapped, and certificates stay.
func TestBase64PEMPrivateKey(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	key := base64.StdEncoding.EncodeToString([]byte(redacttest.PEMBlock + "\n"))
	cert := base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n"))
	var wrapped []string
	for rest := key; rest != ""; {
		n := min(76, len(rest))
		wrapped = append(wrapped, rest[:n])
		rest = rest[n:]
	}
	require.Greater(t, len(wrapped), 2)
	for _, tc := range []struct{ in, want string }{
		{"users:\n- name: admin\n  user:\n    client-certificate-data: " + cert + "\n    client-key-data: " + key + "\n",
			"users:\n- name: admin\n  user:\n    client-certificate-data: " + cert + "\n    client-key-data: [REDACTED:pem_private_key]\n"},
		{`{"data":{"tls.crt":"` + cert + `","tls.key":"` + key + `"}}`, `{"data":{"tls.crt":"` + cert + `","tls.key":"[REDACTED:pem_private_key]"}}`},
		{"$ base64 key.pem\n" + strings.Join(wrapped, "\n") + "\n$ done", "$ base64 key.pem\n[REDACTED:pem_private_key]\n$ done"},
		{"data:\n  tls.key: |\n    " + strings.Join(wrapped, "\n    ") + "\nkind: Secret", "data:\n  tls.key: |\n    [REDACTED:pem_private_key]\nkind: Secret"},
	} {
		var c Counts
		got, _ := r.String(tc.in, &c)
		assert.Equal(t, tc.want, got)
		assert.Equal(t, 1, c[KindPEMPrivateKey], "counts %v", c)
	}
	got, changed := r.Data(auditevent.MustParseData(`{"env":{"TLS_KEY_B64":"x","K":"`+key+`"}}`), nil)
	require.True(t, changed)
	assert.Equal(t, `{"env":{"K":"[REDACTED:pem_private_key]","TLS_KEY_B64":"x"}}`, got.String())
	for _, s := range []string{cert, "LS0tLS1CRUdJTiBub3QgYSBrZXk=", "LS0tLS1CRUdJTi"} {
		got, changed := r.String(s, nil)
		assert.False(t, changed, "%q became %q", s, got)
	}
}
