package trail

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

func TestTopField(t *testing.T) {
	d := auditevent.MustParseData(`{"a":{"command":"nested","path":[1,{"x":"}"}]},"b\"q":"\\\"},{","command":["sh","-c","echo \"hi\" \\ \u00e9"],"exit_code":-2,"z":null}`).Bytes()
	assert.Equal(t, `["sh","-c","echo \"hi\" \\ \u00e9"]`, string(topField(d, "command")))
	assert.Equal(t, "-2", string(topField(d, "exit_code")))
	assert.Equal(t, "null", string(topField(d, "z")))
	assert.Nil(t, topField(d, "path"), "a nested key is not a top-level one")
	assert.Nil(t, topField(d, "x"))
	assert.Equal(t, `echo "hi" \ é`, what(d)[len("sh -c "):])
	assert.Nil(t, topField([]byte(`{}`), "command"))
	assert.Equal(t, "/etc/hosts", what(auditevent.MustParseData(`{"path":"/etc/hosts","user":null}`).Bytes()))
	assert.Equal(t, "8080", what(auditevent.MustParseData(`{"port":8080}`).Bytes()))
}

func TestJSONText(t *testing.T) {
	for in, want := range map[string]string{
		`["ls","-la","/tmp"]`:   "ls -la /tmp",
		`["one"]`:               "one",
		`[]`:                    "",
		`["a",1,"b"]`:           `["a",1,"b"]`,
		`["say \"hi\"","x"]`:    `say "hi" x`,
		`"plain"`:               "plain",
		`"tab\there"`:           "tab\there",
		`{"k":"v"}`:             `{"k":"v"}`,
		`8080`:                  "8080",
		`["a","b\u00e9","c,d"]`: "a bé c,d",
	} {
		assert.Equal(t, want, jsonText([]byte(in)), in)
	}
}

// what is the command (exec), path or port an event's data names, as the
// record carries it (cut to maxWhat).
func what(d []byte) string {
	return string(cutWhat(appendWholeWhat(nil, d, func(key string) (int, int, bool) { return topFieldAt(d, key) })))
}

// topField is the value of a top-level key of a canonical data object, or
// nil.
func topField(d []byte, key string) []byte {
	if from, to, ok := topFieldAt(d, key); ok {
		return d[from:to]
	}
	return nil
}
