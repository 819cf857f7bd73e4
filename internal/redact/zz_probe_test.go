package redact

import "testing"

func TestZZProbe(t *testing.T) {
	r, _ := New(Settings{Enabled: true})
	for _, s := range []string{`{"command":["python","-c","print(1)"],"cwd":"/workspace","timeout_s":30.0}`, `{"exit_code":0}`, `{"bytes":4096,"path":"/workspace/out.txt"}`, `{"path":"/workspace/in.txt"}`,
		`{"command":["python","-m","pytest","-q","tests/test_module_1.py"],"shell":false,"timeout_s":30.0,"user":null}`, `{"command":["ls"]}`} {
		t.Log(r.mayCut([]byte(s)), s)
	}
}
