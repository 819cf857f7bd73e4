package sandboxauditreceiver

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

// A misspelt key among the squashed confighttp server keys, inside its
// optional tls and cors sections, or in the receiver's own sections, is
// named by its path; so is a key only the exporter takes.
func TestUnknownKeyIsNamedByItsPathInTheServerConfig(t *testing.T) {
	for name, tc := range map[string]struct {
		raw  map[string]any
		want string
	}{
		"squashed confighttp": {map[string]any{"max_request_body_sise": 1}, "max_request_body_sise"},
		"optional tls":        {map[string]any{"tls": map[string]any{"cert_file": "c", "key_fil": "k"}}, "tls::key_fil"},
		"optional cors":       {map[string]any{"cors": map[string]any{"allowed_origin": []any{"https://a.example"}}}, "cors::allowed_origin"},
		"own section":         {map[string]any{"dedupe": map[string]any{"enabled": true, "windw": 5}}, "dedupe::windw"},
		"the exporter's key":  {map[string]any{"file": map[string]any{"path": "./x.jsonl"}}, "file"},
	} {
		t.Run(name, func(t *testing.T) {
			err := confmap.NewFromStringMap(tc.raw).Unmarshal(NewFactory().CreateDefaultConfig())
			require.Error(t, err)
			msg := err.Error()
			assert.Contains(t, msg, "'' "+tc.want+": unknown key")
			assert.Equal(t, 1, strings.Count(msg, "unknown key"), "one key named: %s", msg)
			assert.NotContains(t, msg, "has invalid keys")
			assert.NotContains(t, msg, "sandboxauditreceiver.")
		})
	}
}

// enabled in an optional section and any response header name are keys
// the decoder takes: beside a misspelt key, they are not named.
func TestNoUnknownKeyInTheServerConfigsOptionalSections(t *testing.T) {
	raw := map[string]any{
		"endpoint":         "127.0.0.1:0",
		"tls":              map[string]any{"enabled": false},
		"cors":             map[string]any{"enabled": true, "allowed_origins": []any{"https://a.example"}},
		"response_headers": map[string]any{"x-anything": "1"},
		"keepalive":        map[string]any{"enabled": true},
	}
	require.NoError(t, confmap.NewFromStringMap(raw).Unmarshal(NewFactory().CreateDefaultConfig()))
	raw["max_pendng"] = 1
	err := confmap.NewFromStringMap(raw).Unmarshal(NewFactory().CreateDefaultConfig())
	require.Error(t, err)
	assert.True(t, strings.HasSuffix(err.Error(), "'' max_pendng: unknown key"), "%v", err)
	assert.Equal(t, 1, strings.Count(err.Error(), "unknown key"), "%v", err)
}
