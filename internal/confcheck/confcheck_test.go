package confcheck

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

type inner struct {
	Timeout time.Duration `mapstructure:"timeout"`
	MaxSize int64         `mapstructure:"max_size"`
	Count   uint          `mapstructure:"count"`
	Ratio   float64       `mapstructure:"ratio"`
	Name    string        `mapstructure:"name"`
}

type outer struct {
	Inner inner   `mapstructure:"inner"`
	Limit int     `mapstructure:"limit"`
	List  []inner `mapstructure:"list"`
}

func decode(t *testing.T, raw map[string]any) error {
	t.Helper()
	conf := confmap.NewFromStringMap(raw)
	var cfg outer
	require.NoError(t, conf.Unmarshal(&cfg))
	return Numbers(conf, &cfg)
}

func TestNumbersRefusesWhatTheDecoderChanges(t *testing.T) {
	for name, tc := range map[string]struct {
		raw  map[string]any
		want []string
	}{
		"fraction":          {map[string]any{"limit": 1.5}, []string{"limit: must be a whole number within range (got 1.5)"}},
		"nested fraction":   {map[string]any{"inner": map[string]any{"max_size": 0.9}}, []string{"inner::max_size: must be a whole number"}},
		"out of range":      {map[string]any{"limit": 1e23}, []string{"limit: must be a whole number within range (got 1e+23)"}},
		"negative unsigned": {map[string]any{"inner": map[string]any{"count": -1}}, nil},
		"bare duration":     {map[string]any{"inner": map[string]any{"timeout": 30}}, []string{"inner::timeout: a duration needs a unit"}},
		"float duration":    {map[string]any{"inner": map[string]any{"timeout": 1.5}}, []string{"inner::timeout: a duration needs a unit"}},
		// A list's elements (the exporter's witnesses) are checked too,
		// each by its index.
		"bare duration in a list": {map[string]any{"list": []any{map[string]any{"timeout": "1s"}, map[string]any{"timeout": 5}}},
			[]string{"list::1::timeout: a duration needs a unit"}},
		"fraction in a list": {map[string]any{"list": []any{map[string]any{"max_size": 0.9}}}, []string{"list::0::max_size: must be a whole number"}},
	} {
		t.Run(name, func(t *testing.T) {
			conf := confmap.NewFromStringMap(tc.raw)
			var cfg outer
			if err := conf.Unmarshal(&cfg); err != nil {
				require.Nil(t, tc.want, "the decoder itself refused it: %v", err)
				return
			}
			err := Numbers(conf, &cfg)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}

func TestNumbersAcceptsWhatTheDecoderKeeps(t *testing.T) {
	require.NoError(t, decode(t, map[string]any{
		"limit": 3,
		"inner": map[string]any{"timeout": "30s", "max_size": 1e3, "count": 7, "ratio": 0.5, "name": "1.5"},
	}))
	require.NoError(t, decode(t, map[string]any{"inner": map[string]any{"timeout": 0}}), "0 needs no unit")
	require.NoError(t, decode(t, map[string]any{"list": []any{map[string]any{"timeout": "5s", "max_size": 4}}}))
}

func TestUnmarshalNamesAnUnknownKeyByItsPath(t *testing.T) {
	for name, tc := range map[string]struct {
		raw  map[string]any
		want string
	}{
		"top level":  {map[string]any{"limitt": 3}, `limitt: unknown key`},
		"nested":     {map[string]any{"inner": map[string]any{"bogus": 1}}, `inner::bogus: unknown key`},
		"nested map": {map[string]any{"inner": map[string]any{"bogus": map[string]any{"a": 1}}}, `inner::bogus: unknown key`},
	} {
		t.Run(name, func(t *testing.T) {
			var cfg outer
			err := Unmarshal(confmap.NewFromStringMap(tc.raw), &cfg)
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.want)
			assert.NotContains(t, err.Error(), "confcheck.", "an operator's error names no Go package")
			assert.NotContains(t, err.Error(), "bogus::a")
		})
	}
}

func TestUnmarshalKeepsTheDecodersErrorForAWrongType(t *testing.T) {
	var cfg outer
	err := Unmarshal(confmap.NewFromStringMap(map[string]any{"inner": map[string]any{"timeout": "soon"}}), &cfg)
	require.Error(t, err)
	assert.ErrorContains(t, err, "timeout")
}

type listed struct {
	Items []inner `mapstructure:"items"`
	Limit int     `mapstructure:"limit"`
}

// An unknown key inside a list is named by its path, the element's index a
// segment of it.
func TestUnmarshalNamesAnUnknownKeyInAList(t *testing.T) {
	var cfg listed
	raw := map[string]any{"limitt": 1, "items": []any{map[string]any{"name": "a"}, map[string]any{"name": "b", "bogus": 1}}}
	err := Unmarshal(confmap.NewFromStringMap(raw), &cfg)
	require.Error(t, err)
	assert.EqualError(t, err, "items::1::bogus: unknown key\nlimitt: unknown key")
}

type mode string

type typed struct {
	Mode  mode  `mapstructure:"mode"`
	Inner inner `mapstructure:"inner"`
}

// A value of the wrong type for a key of a named type is described by its
// kind, never by the Go package and type that hold it.
func TestUnmarshalNamesNoGoTypeForAWrongType(t *testing.T) {
	var cfg typed
	err := Unmarshal(confmap.NewFromStringMap(map[string]any{"mode": 5}), &cfg)
	require.Error(t, err)
	assert.ErrorContains(t, err, "'mode' expected type 'string', got unconvertible type 'int'")
	assert.NotContains(t, err.Error(), "confcheck.")
	err = Unmarshal(confmap.NewFromStringMap(map[string]any{"mode": []any{"a"}}), &cfg)
	require.Error(t, err)
	assert.ErrorContains(t, err, "'mode' expected type 'string', got unconvertible type 'list'")
}

// A duration that does not parse is described without Go's package name.
func TestUnmarshalBadDurationNamesNoGoPackage(t *testing.T) {
	for _, v := range []string{"100000000h", "5x", "5"} {
		var cfg outer
		err := Unmarshal(confmap.NewFromStringMap(map[string]any{"inner": map[string]any{"timeout": v}}), &cfg)
		require.Error(t, err, v)
		assert.ErrorContains(t, err, "timeout", v)
		assert.NotContains(t, err.Error(), "time: ", v)
	}
}

type expressions struct {
	Patterns []string `mapstructure:"patterns" confcheck:"whole"`
	Names    []string `mapstructure:"names"`
	Nested   []struct {
		Allow []string `mapstructure:"allow" confcheck:"whole"`
	} `mapstructure:"nested"`
}

// A list tagged whole (regular expressions) written as one string is
// refused when it holds a comma: the decoder splits it there, so
// "[0-9]{20,40}" became "[0-9]{20" and "40}", two literals that redact
// nothing. The value is not shown: it may be written to match a secret.
func TestUnmarshalRefusesAWholeListSplitAtCommas(t *testing.T) {
	var cfg expressions
	err := Unmarshal(confmap.NewFromStringMap(map[string]any{
		"patterns": "SECRET[0-9]{20,40}",
		"nested":   []any{map[string]any{"allow": "a,b"}},
	}), &cfg)
	require.Error(t, err)
	assert.ErrorContains(t, err, "patterns: one string is split at each comma")
	assert.ErrorContains(t, err, "nested::0::allow: one string is split at each comma")
	assert.NotContains(t, err.Error(), "SECRET")

	for name, raw := range map[string]map[string]any{
		"a list":                   {"patterns": []any{"[0-9]{20,40}"}},
		"one string without comma": {"patterns": "token-[a-z]+"},
		"an untagged list":         {"names": "a,b"},
	} {
		t.Run(name, func(t *testing.T) {
			var cfg expressions
			require.NoError(t, Unmarshal(confmap.NewFromStringMap(raw), &cfg))
		})
	}
}
