package sandboxauditprocessor

import (
	"strings"
	"testing"
)

// FuzzBrokenLineKeepsNoOutputKey: what cutBrokenText keeps of a body that
// opens an object and is not valid JSON holds no output key and no escape
// that may spell one, and is a prefix of the body. Seeds:
// testdata/fuzz/FuzzBrokenLineKeepsNoOutputKey.
func FuzzBrokenLineKeepsNoOutputKey(f *testing.F) {
	f.Add(outputLine[:len(outputLine)-1])
	f.Add(outputLine + "x")
	f.Add(strings.Replace(outputLine, `"stdout"`, `"s\u0074dout"`, 1) + "}")
	f.Fuzz(func(t *testing.T, body string) {
		out, _ := cutBrokenText(body, nil, nil)
		if !strings.HasPrefix(body, out) {
			t.Fatalf("kept %q, not a prefix of the body", out)
		}
		if out == body {
			return // valid JSON, or no object: left as it is
		}
		for _, mark := range []string{`"stdout"`, `"stderr"`, `\u`} {
			if strings.Contains(out, mark) {
				t.Fatalf("kept %q, holding %s", out, mark)
			}
		}
	})
}
