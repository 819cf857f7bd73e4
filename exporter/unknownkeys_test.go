package sandboxauditexporter

import (
	"maps"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/confmap"

	"github.com/sandboxaudit/sandboxaudit/internal/confcheck"
)

// An operator's misspelt key is named by its path, each once, never by the
// Go type holding it; a header or op that happens to share the name is not.
func TestUnknownKeyIsNamedByItsPath(t *testing.T) {
	conf := confmap.NewFromStringMap(map[string]any{
		"file": map[string]any{"path": "./x.jsonl", "bogus": 1},
		"http": map[string]any{
			"endpoint": "http://127.0.0.1:1",
			"bogus":    2,
			"headers":  map[string]any{"bogus": "x"},
			"spool":    map[string]any{"path": "./s.jsonl", "maxsize": 3},
		},
		"payload_policy_by_op": map[string]any{"exec": map[string]any{"bogus": true}},
	})
	err := conf.Unmarshal(NewFactory().CreateDefaultConfig())
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{"file::bogus: unknown key", "http::bogus: unknown key",
		"http::spool::maxsize: unknown key", "payload_policy_by_op::exec::bogus: unknown key"} {
		assert.Equal(t, 1, strings.Count(msg, want), "%q once in %s", want, msg)
	}
	assert.NotContains(t, msg, "headers::bogus")
	assert.NotContains(t, msg, "sandboxauditexporter.")
	assert.NotContains(t, msg, "has invalid keys")
}

// unknownKeysOf decodes raw into the exporter's default config and returns
// the error an operator would read.
func unknownKeysOf(t *testing.T, raw map[string]any) string {
	t.Helper()
	err := confmap.NewFromStringMap(raw).Unmarshal(NewFactory().CreateDefaultConfig())
	require.Error(t, err)
	msg := err.Error()
	assert.NotContains(t, msg, "has invalid keys")
	assert.NotContains(t, msg, "sandboxauditexporter.")
	assert.NotContains(t, msg, "confighttp.")
	return msg
}

func fileAt(extra map[string]any) map[string]any {
	file := map[string]any{"path": "./x.jsonl"}
	maps.Copy(file, extra)
	return file
}

// A misspelt key is named by its full path at every depth: at the top, in
// a nested section, in a list element, among the squashed confighttp and
// exporterhelper keys, and inside an optional section.
func TestUnknownKeyAtEachDepth(t *testing.T) {
	witnesses := []any{
		map[string]any{"endpoint": "https://w0.example/", "public_key": "k0"},
		map[string]any{"endpoint": "https://w1.example/", "publickey": "k1"},
	}
	for name, tc := range map[string]struct {
		raw  map[string]any
		want string
	}{
		"top":          {map[string]any{"file": fileAt(nil), "max_line_byte": 5}, "max_line_byte"},
		"nested":       {map[string]any{"file": fileAt(map[string]any{"rotation": map[string]any{"max_megabyte": 5}})}, "file::rotation::max_megabyte"},
		"list element": {map[string]any{"file": fileAt(map[string]any{"integrity": map[string]any{"witnesses": witnesses}})}, "file::integrity::witnesses::1::publickey"},
		"squashed confighttp": {map[string]any{"http": map[string]any{"endpoint": "http://127.0.0.1:1", "max_idle_con": 3}},
			"http::max_idle_con"},
		"confighttp's tls": {map[string]any{"http": map[string]any{"endpoint": "http://127.0.0.1:1", "tls": map[string]any{"insecure_skip_verfy": true}}},
			"http::tls::insecure_skip_verfy"},
		"squashed exporterhelper": {map[string]any{"file": fileAt(nil), "timeot": "5s"}, "timeot"},
		"retry":                   {map[string]any{"file": fileAt(nil), "retry_on_failure": map[string]any{"max_intervl": "1s"}}, "retry_on_failure::max_intervl"},
		"optional":                {map[string]any{"file": fileAt(map[string]any{"fsnyc": "batch"})}, "file::fsnyc"},
		"optional in exporterhelper's optional": {map[string]any{"file": fileAt(nil), "sending_queue": map[string]any{"batch": map[string]any{"flush_timeot": "1s"}}},
			"sending_queue::batch::flush_timeot"},
		"the receiver's key":  {map[string]any{"file": fileAt(nil), "max_pending": 5}, "max_pending"},
		"the processor's key": {map[string]any{"file": fileAt(nil), "genai_attributes": true}, "genai_attributes"},
	} {
		t.Run(name, func(t *testing.T) {
			msg := unknownKeysOf(t, tc.raw)
			assert.Contains(t, msg, "'' "+tc.want+": unknown key")
			assert.Equal(t, 1, strings.Count(msg, "unknown key"), "one key named: %s", msg)
		})
	}
}

// Two misspelt keys are both named, in the order of their paths.
func TestTwoUnknownKeysInTheOrderOfTheirPaths(t *testing.T) {
	raw := map[string]any{"retry_on_failur": map[string]any{}, "file": fileAt(map[string]any{"fsnyc": "batch"})}
	for range 3 {
		msg := unknownKeysOf(t, raw)
		assert.True(t, strings.HasSuffix(msg, "file::fsnyc: unknown key\nretry_on_failur: unknown key"), "%s", msg)
	}
}

// Keys the decoder takes are never named: enabled in an optional section,
// any header name, confighttp's and exporterhelper's keys, and every key a
// full config marshals to.
func TestNoUnknownKeyInAFullConfig(t *testing.T) {
	client := map[string]any{
		"endpoint": "https://127.0.0.1:1/", "proxy_url": "", "timeout": "5s", "read_buffer_size": 1, "write_buffer_size": 1,
		"headers":     map[string]any{"x-anything": "1", "timeout": "2"},
		"auth":        map[string]any{"authenticator": "bearertokenauth"},
		"compression": "zstd", "compression_params": map[string]any{"level": 1},
		"max_conns_per_host": 2, "http2_read_idle_timeout": "1s", "http2_ping_timeout": "1s", "force_attempt_http2": true,
		"cookies":     map[string]any{"enabled": true},
		"keepalive":   map[string]any{"idle_conn_timeout": "1s", "max_idle_conns": 3, "max_idle_conns_per_host": 1},
		"middlewares": []any{map[string]any{"id": "mw"}},
		"tls": map[string]any{"insecure": false, "insecure_skip_verify": false, "server_name_override": "x",
			"ca_file": "", "cert_file": "", "key_file": "", "min_version": "1.3", "reload_interval": "1h", "include_system_ca_certs_pool": true},
	}
	witness := maps.Clone(client)
	witness["public_key"] = "k"
	http := maps.Clone(client)
	maps.Copy(http, map[string]any{"enabled": true, "format": "ndjson", "debug_response_body": false,
		"spool": map[string]any{"path": "./s.jsonl", "max_size": 1, "replay_interval": "1s"}})
	raw := map[string]any{
		"file": fileAt(map[string]any{"enabled": true, "fsync": "batch", "max_open_files": 2,
			"rotation":  map[string]any{"enabled": false, "max_megabytes": 1},
			"integrity": map[string]any{"signing_key_file": "k", "witnesses": []any{witness, witness}, "witness_quorum": 1}}),
		"http":             http,
		"timeout":          "5s",
		"retry_on_failure": map[string]any{"enabled": true, "max_interval": "1s"},
		"sending_queue": map[string]any{"enabled": false, "num_consumers": 1, "storage": "file_storage", "sizer": "items",
			"batch": map[string]any{"enabled": true, "flush_timeout": "1s", "partition": map[string]any{"metadata_keys": []any{"a"}}}},
		"payload_policy_by_op": map[string]any{"exec": map[string]any{"max_stdout_chars": 1, "redact": map[string]any{"enabled": true}}},
	}
	require.NoError(t, confmap.NewFromStringMap(raw).Unmarshal(NewFactory().CreateDefaultConfig()), "the decoder takes it")
	assert.NoError(t, confcheck.UnknownKeys(confmap.NewFromStringMap(raw), NewFactory().CreateDefaultConfig()))

	cfg := NewFactory().CreateDefaultConfig().(*Config)
	fc := cfg.File.GetOrInsertDefault()
	fc.Integrity.GetOrInsertDefault().Witnesses = []WitnessConfig{{ClientConfig: confighttp.NewDefaultClientConfig()}}
	fc.Rotation.GetOrInsertDefault()
	cfg.HTTP.GetOrInsertDefault().Spool.GetOrInsertDefault()
	cfg.QueueConfig.GetOrInsertDefault().Batch.GetOrInsertDefault()
	full := confmap.New()
	require.NoError(t, full.Marshal(cfg))
	for _, key := range []string{"file::integrity::witnesses", "http::spool::replay_interval", "http::keepalive::max_idle_conns", "sending_queue::batch::flush_timeout", "timeout"} {
		require.True(t, full.IsSet(key), "the full config has %s: %v", key, full.AllKeys())
	}
	assert.NoError(t, confcheck.UnknownKeys(full, NewFactory().CreateDefaultConfig()))
}
