package confcheck

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap"
)

type client struct {
	Endpoint string `mapstructure:"endpoint"`
	Timeout  string `mapstructure:"timeout"`
}

type leaf struct {
	Name string `mapstructure:"name"`
}

type extras struct {
	Rest map[string]any `mapstructure:",remain"`
	Name string         `mapstructure:"name"`
}

// selfDecoding takes any keys: its Unmarshal reads them, not its fields.
type selfDecoding struct {
	Pairs map[string]string
}

func (s *selfDecoding) Unmarshal(conf *confmap.Conf) error { return conf.Unmarshal(&s.Pairs) }

// wide holds every shape the walk meets: a squashed struct, a squashed
// pointer, an Optional, a pointer, lists of structs and of pointers, maps
// of structs, a remain field, a self-decoding type and a headers map.
type wide struct {
	Client   client                        `mapstructure:",squash"`
	Ptr      *leaf                         `mapstructure:",squash"`
	Opt      configoptional.Optional[leaf] `mapstructure:"opt"`
	Nested   *outer                        `mapstructure:"nested"`
	Items    []leaf                        `mapstructure:"items"`
	Ptrs     []*leaf                       `mapstructure:"ptrs"`
	ByName   map[string]leaf               `mapstructure:"by_name"`
	Extras   extras                        `mapstructure:"extras"`
	Self     selfDecoding                  `mapstructure:"self"`
	Headers  configopaque.MapList          `mapstructure:"headers"`
	Any      any                           `mapstructure:"any"`
	Untagged int
	//lint:ignore U1000 an unexported field, which takes no key
	hidden int
}

func unknownOf(t *testing.T, raw map[string]any) string {
	t.Helper()
	err := UnknownKeys(confmap.NewFromStringMap(raw), &wide{})
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestUnknownKeysNamesEachKeyByItsPath(t *testing.T) {
	for name, tc := range map[string]struct {
		raw  map[string]any
		want string
	}{
		"top level":                   {map[string]any{"endpont": "x"}, "endpont: unknown key"},
		"squashed":                    {map[string]any{"endpoint": "x", "timeot": "1s"}, "timeot: unknown key"},
		"squashed pointer":            {map[string]any{"name": "x", "nme": "y"}, "nme: unknown key"},
		"in an optional":              {map[string]any{"opt": map[string]any{"nam": "x"}}, "opt::nam: unknown key"},
		"through a pointer":           {map[string]any{"nested": map[string]any{"inner": map[string]any{"ratoi": 1}}}, "nested::inner::ratoi: unknown key"},
		"in a list":                   {map[string]any{"items": []any{map[string]any{"name": "a"}, map[string]any{"nmae": "b"}}}, "items::1::nmae: unknown key"},
		"in a pointer list":           {map[string]any{"ptrs": []any{map[string]any{"x": 1}}}, "ptrs::0::x: unknown key"},
		"in a map value":              {map[string]any{"by_name": map[string]any{"a": map[string]any{"nam": 1}}}, "by_name::a::nam: unknown key"},
		"go name is no tag":           {map[string]any{"Client": map[string]any{}}, "Client: unknown key"},
		"unexported":                  {map[string]any{"hidden": 1}, "hidden: unknown key"},
		"case matters":                {map[string]any{"Endpoint": "x"}, "Endpoint: unknown key"},
		"in a list of headers":        {map[string]any{"headers": []any{map[string]any{"name": "a", "value": "b", "vaule": "c"}}}, "headers::0::vaule: unknown key"},
		"enabled outside an optional": {map[string]any{"nested": map[string]any{"enabled": true}}, "nested::enabled: unknown key"},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, unknownOf(t, tc.raw))
			path := strings.TrimSuffix(tc.want, ": unknown key")
			key := path[strings.LastIndex(path, ":")+1:]
			assert.ErrorContains(t, confmap.NewFromStringMap(tc.raw).Unmarshal(&wide{}), "has invalid keys: "+key,
				"the decoder refuses it too")
		})
	}
}

func TestUnknownKeysTakesWhatTheDecoderTakes(t *testing.T) {
	raw := map[string]any{
		"endpoint": "x", "timeout": "1s", "name": "n", "Untagged": 3,
		"opt":     map[string]any{"enabled": false, "name": "o"},
		"nested":  map[string]any{"limit": 1, "inner": map[string]any{"name": "i"}},
		"items":   []any{map[string]any{"name": "a"}},
		"by_name": map[string]any{"any key": map[string]any{"name": "b"}, "nil": nil},
		"extras":  map[string]any{"name": "e", "whatever": 1},
		"self":    map[string]any{"whatever": "1"},
		"headers": map[string]any{"bogus": "1"},
		"any":     map[string]any{"bogus": 1},
	}
	assert.Empty(t, unknownOf(t, raw))
	assert.Empty(t, unknownOf(t, map[string]any{"items": []any{"not a map"}, "opt": "not a map"}), "a wrong type is the decoder's to name")
	assert.Empty(t, unknownOf(t, map[string]any{"headers": []any{map[string]any{"name": "a", "value": "b"}}}), "headers as a list of pairs")
	var cfg wide
	require.NoError(t, confmap.NewFromStringMap(raw).Unmarshal(&cfg, confmap.WithIgnoreUnused()),
		"the decoder takes each key of the right type")
}

// Unknown keys come in the order of their paths, whatever the order of
// the map.
func TestUnknownKeysInAStableOrder(t *testing.T) {
	raw := map[string]any{
		"zz": 1, "opt": map[string]any{"b": 1, "a": 2},
		"items": []any{map[string]any{"y": 1}, map[string]any{}, map[string]any{"x": 1}},
	}
	want := "items::0::y: unknown key\nitems::2::x: unknown key\nopt::a: unknown key\nopt::b: unknown key\nzz: unknown key"
	for range 5 {
		require.Equal(t, want, unknownOf(t, raw))
	}
}

type selfConfig struct {
	Limit int    `mapstructure:"limit"`
	Inner *inner `mapstructure:"inner"`
}

func (c *selfConfig) Unmarshal(conf *confmap.Conf) error { return Unmarshal(conf, c) }

// A component config decodes itself through Unmarshal; nested in another,
// its keys are still walked, and the decoder is not run twice into it.
func TestUnmarshalThroughAComponentsOwnUnmarshal(t *testing.T) {
	var holder struct {
		C selfConfig `mapstructure:"c"`
	}
	err := confmap.NewFromStringMap(map[string]any{"c": map[string]any{"limitt": 1, "inner": map[string]any{"nme": "x"}}}).Unmarshal(&holder)
	require.Error(t, err)
	assert.ErrorContains(t, err, "inner::nme: unknown key\nlimitt: unknown key")
	assert.NotContains(t, err.Error(), "has invalid keys")
}

// A value of the wrong type beside a misspelt key is named too, with the
// decoder's words for it.
func TestUnmarshalNamesAWrongTypeBesideAnUnknownKey(t *testing.T) {
	var cfg outer
	err := Unmarshal(confmap.NewFromStringMap(map[string]any{"limitt": 1, "inner": map[string]any{"count": "many"}}), &cfg)
	require.Error(t, err)
	assert.ErrorContains(t, err, "limitt: unknown key")
	assert.ErrorContains(t, err, "count' expected type 'uint', got unconvertible type 'string'")
	assert.NotContains(t, err.Error(), "has invalid keys")
}

// Where the walk cannot place a key (a self-decoding type refuses it),
// the decoder's own error stands.
func TestUnmarshalLeavesAnUnplacedKeyToTheDecoder(t *testing.T) {
	var cfg struct {
		Self strict `mapstructure:"self"`
	}
	err := Unmarshal(confmap.NewFromStringMap(map[string]any{"self": map[string]any{"b": 1}}), &cfg)
	require.Error(t, err)
	assert.ErrorContains(t, err, "has invalid keys: b")
}

// strict decodes itself into a field it names in no tag.
type strict struct{ A int }

func (s *strict) Unmarshal(conf *confmap.Conf) error {
	var only struct {
		A int `mapstructure:"a"`
	}
	err := conf.Unmarshal(&only)
	s.A = only.A
	return err
}
