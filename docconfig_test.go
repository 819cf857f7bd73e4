package sandboxaudit

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"

	sandboxauditencoding "github.com/sandboxaudit/sandboxaudit/encoding"
	sandboxauditexporter "github.com/sandboxaudit/sandboxaudit/exporter"
	sandboxauditprocessor "github.com/sandboxaudit/sandboxaudit/processor"
	sandboxauditreceiver "github.com/sandboxaudit/sandboxaudit/receiver"
)

const modulePath = "github.com/sandboxaudit/sandboxaudit"

// configKeys walks a configuration struct's mapstructure keys, dot-joined.
// own gets the keys our packages define; inherited gets the keys squashed in
// from collector packages (confighttp, exporterhelper), which a README may
// name but need not list. One of our structs met before is not walked
// again: its keys are documented where it first appears (file.payload_policy
// has payload_policy's keys), and a map's values likewise
// (payload_policy_by_op.<op>).
type configKeys struct {
	own, inherited map[string]bool
	walked         map[reflect.Type]bool
}

func newConfigKeys(cfg component.Config) *configKeys {
	k := &configKeys{own: map[string]bool{}, inherited: map[string]bool{}, walked: map[reflect.Type]bool{}}
	k.walk(reflect.TypeOf(cfg), "", false)
	return k
}

func (k *configKeys) walk(t reflect.Type, prefix string, inherited bool) {
	t = unwrap(t)
	if t.Kind() != reflect.Struct || (!inherited && k.walked[t]) {
		return
	}
	if !inherited {
		k.walked[t] = true
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		squash := strings.Contains(f.Tag.Get("mapstructure"), "squash")
		if tag == "-" || (tag == "" && !squash) {
			continue
		}
		ft := unwrap(f.Type)
		foreign := ft.PkgPath() != "" && !strings.HasPrefix(ft.PkgPath(), modulePath)
		if squash {
			k.walk(ft, prefix, inherited || foreign)
			continue
		}
		key := prefix + tag
		if inherited {
			k.inherited[key] = true
		} else {
			k.own[key] = true
		}
		switch {
		case ft.Kind() == reflect.Map && unwrap(ft.Elem()).Kind() == reflect.Struct:
			k.own[key+".<op>"] = !inherited
		case foreign && !inherited:
			// A collector section (retry_on_failure, sending_queue): its
			// keys are the collector's, documented there.
			k.walk(ft, key+".", true)
		default:
			k.walk(ft, key+".", inherited)
		}
	}
}

// unwrap looks through pointers, slices and configoptional.Optional to the
// type whose keys a section holds.
func unwrap(t reflect.Type) reflect.Type {
	for {
		switch {
		case t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice:
			t = t.Elem()
		case t.Kind() == reflect.Struct && strings.HasPrefix(t.Name(), "Optional["):
			t = t.Field(0).Type
		default:
			return t
		}
	}
}

var backticked = regexp.MustCompile("`([^`]+)`")

// TestComponentREADMEsDocumentEveryConfigKey checks each component README's
// configuration table against the component's config struct both ways: a
// key the code defines is named in the README (in full, or as a word of its
// parent key's row), and a key the table names exists in the code.
func TestComponentREADMEsDocumentEveryConfigKey(t *testing.T) {
	for readme, cfg := range map[string]component.Config{
		"exporter/README.md":  sandboxauditexporter.NewFactory().CreateDefaultConfig(),
		"receiver/README.md":  sandboxauditreceiver.NewFactory().CreateDefaultConfig(),
		"processor/README.md": sandboxauditprocessor.NewFactory().CreateDefaultConfig(),
		"encoding/README.md":  sandboxauditencoding.NewFactory().CreateDefaultConfig(),
	} {
		t.Run(readme, func(t *testing.T) {
			raw, err := os.ReadFile(readme)
			require.NoError(t, err)
			text := string(raw)
			keys := newConfigKeys(cfg)
			require.NotEmpty(t, keys.own)
			for key := range keys.own {
				assert.True(t, documented(text, key), "%s does not name the config key %s", readme, key)
			}
			rows := configTableKeys(text)
			require.NotEmpty(t, rows, "%s has a table under ## Configuration", readme)
			for _, key := range rows {
				assert.True(t, keys.own[key] || keys.inherited[key],
					"%s names the config key %s, which the code does not have", readme, key)
			}
		})
	}
}

// documented reports whether the README names key or one of its keys in
// backticks, or names its last part in backticks on a line that names its
// parent.
func documented(text, key string) bool {
	if strings.Contains(text, "`"+key+"`") || strings.Contains(text, "`"+key+".") {
		return true
	}
	i := strings.LastIndex(key, ".")
	if i < 0 {
		return false
	}
	parent, leaf := key[:i], key[i+1:]
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "`"+parent+"`") && strings.Contains(line, "`"+leaf+"`") {
			return true
		}
	}
	return false
}

// configTableKeys gives the keys in the first column of the table under a
// README's "## Configuration" heading.
func configTableKeys(text string) []string {
	_, section, ok := strings.Cut(text, "\n## Configuration\n")
	if !ok {
		return nil
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var keys []string
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.Contains(cells[1], "`") {
			continue
		}
		for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			keys = append(keys, m[1])
		}
	}
	return keys
}
