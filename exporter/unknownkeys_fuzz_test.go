package sandboxauditexporter

import (
	"testing"

	"go.opentelemetry.io/collector/confmap"

	"github.com/sandboxaudit/sandboxaudit/internal/confcheck"
)

// FuzzUnknownKeys: the walk of a config beside the exporter's tags never
// names a key of a config the decoder takes, and never panics.
func FuzzUnknownKeys(f *testing.F) {
	f.Add([]byte("file: {path: ./x.jsonl, fsnyc: batch}\nmax_pending: 3\n"))
	f.Add([]byte("http: {endpoint: http://a, headers: {x: y}, tls: {insecure: true}, spool: {path: s}}\n"))
	f.Add([]byte("file:\n  path: x\n  integrity:\n    witnesses:\n      - {endpoint: http://w, publickey: k}\n      - 3\n"))
	f.Add([]byte("sending_queue: {enabled: false, batch: {enabled: true, partition: {}}}\nretry_on_failure: ~\n"))
	f.Fuzz(func(t *testing.T, yaml []byte) {
		retrieved, err := confmap.NewRetrievedFromYAML(yaml)
		if err != nil {
			return
		}
		conf, err := retrieved.AsConf()
		if err != nil {
			return
		}
		unknown := confcheck.UnknownKeys(conf, NewFactory().CreateDefaultConfig())
		if unknown != nil && conf.Unmarshal(NewFactory().CreateDefaultConfig()) == nil {
			t.Fatalf("the decoder takes the config, yet %v", unknown)
		}
	})
}
