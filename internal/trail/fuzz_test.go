package trail

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// FuzzReadOps reads arbitrary bytes as a trail: no panic, and every line
// that comes out is in the input, unchanged: one of its lines, or the whole
// event line after a piece in one, or that piece when it is an event.
func FuzzReadOps(f *testing.F) {
	var seed bytes.Buffer
	_, _ = genTrail(&seed, 2, 3)
	f.Add(seed.Bytes())
	f.Add(bytes.Replace(seed.Bytes(), []byte("\n"), nil, 1)) // the first line lost its newline
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

// FuzzLightScan reads any line both ways: a line the light scan takes, the
// full decode takes too, with the same value in every field show, sessions
// and serve carry, the command or path and the exit code included.
func FuzzLightScan(f *testing.F) {
	var seed bytes.Buffer
	_, _ = genTrail(&seed, 2, 2)
	for _, l := range bytes.SplitAfter(seed.Bytes(), []byte("\n")) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		text := bytes.TrimSuffix(line, []byte("\n"))
		var light, full rec
		var d decoded
		if !scanLine(text, &light, &d.LineFields) {
			return
		}
		if err := fullLine(text, &full, &d.Event); err != nil {
			t.Fatalf("light scan took a line the decoder refuses (%v): %q", err, line)
		}
		if light.session != full.session || light.phase != full.phase || light.spanID != full.spanID ||
			light.traceID != full.traceID || light.op != full.op || !bytes.Equal(light.data, full.data) {
			t.Fatalf("ids differ: %+v, %+v", light, full)
		}
		if !reflect.DeepEqual(light.ev, full.ev) {
			t.Fatalf("event fields differ: %+v, %+v", light.ev, full.ev)
		}
		if what(light.data) != what(full.data) || string(topField(light.data, "exit_code")) != string(topField(full.data, "exit_code")) {
			t.Fatalf("data read differs: %q, %q", light.data, full.data)
		}
	})
}
