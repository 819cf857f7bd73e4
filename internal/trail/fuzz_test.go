package trail

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// FuzzReadOps reads arbitrary bytes as a trail: no panic, and every line
// that comes out is one of the input's lines, unchanged.
func FuzzReadOps(f *testing.F) {
	var seed bytes.Buffer
	_, _ = genTrail(&seed, 2, 3)
	f.Add(seed.Bytes())
	f.Add([]byte("{}\n\n{\"phase\":\"finish\"}\nnot json"))
	f.Fuzz(func(t *testing.T, in []byte) {
		p := filepath.Join(t.TempDir(), "events.jsonl")
		if err := os.WriteFile(p, in, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := ReadOps(context.Background(), []string{p}, Options{KeepLines: true, RunBytes: 4096, TempDir: t.TempDir()}, func(o *Op) error {
			for _, e := range []*Event{o.Start, o.Finish} {
				if e != nil && !bytes.Contains(in, e.Line) {
					t.Fatalf("line %d not in the input: %q", e.LineNum, e.Line)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzTopField looks up keys in any canonical data object: no panic, and
// a value found is a part of the object.
func FuzzTopField(f *testing.F) {
	f.Add(`{"command":["sh","-c","x"],"exit_code":0}`)
	f.Add(`{"a":{"command":1},"path":"/x\"y"}`)
	f.Fuzz(func(t *testing.T, in string) {
		d, err := auditevent.ParseDataString(in)
		if err != nil {
			return
		}
		b := d.Bytes()
		for _, k := range []string{"command", "path", "port", "exit_code"} {
			if v := topField(b, k); v != nil && !bytes.Contains(b, v) {
				t.Fatalf("%s: %q not in %q", k, v, b)
			}
		}
		_ = what(b)
	})
}
