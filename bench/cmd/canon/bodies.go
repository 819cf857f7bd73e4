package main

import (
	"bytes"
	"fmt"
	"time"
)

// bodies writes n event bodies the way the Python HttpProxySink posts them
// (pydantic model_dump_json: model field order, no spaces, non-ASCII raw):
// exec start/finish pairs with some reads and writes, a few failures.
func bodies(n int) []byte {
	var b bytes.Buffer
	epoch := time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)
	for i := range n {
		op, phase := opOf(i), "start"
		if i%2 == 1 {
			phase = "finish"
		}
		ts := epoch.Add(time.Duration(i) * 1250 * time.Microsecond).Format("2006-01-02T15:04:05.000000Z")
		session := fmt.Sprintf("6f1c2a8e-3b4d-4e5f-9a0b-%012x", i/200)
		fmt.Fprintf(&b, `{"version":1,"event_id":"%08x-6f5a-4b3c-8d2e-1f0a9b8c7d6e","ts":"%s","session_id":"%s","seq":%d,"op":"%s","phase":"%s","span_id":"sandbox_op_%032x","parent_span_id":null,"trace_id":null,"data":%s`,
			i, ts, session, i%200+1, op, phase, i/2, dataOf(op, i))
		if phase == "finish" {
			ok, code, typ, msg := "true", "null", "null", "null"
			if i%50 == 49 {
				ok, code, typ, msg = "false", `"exec_nonzero"`, `"ExecNonZeroError"`, `"command exited with 1"`
			}
			fmt.Fprintf(&b, `,"ok":%s,"duration_ms":%d.%03d,"error_code":%s,"error_type":%s,"error_message":%s,"error_retryable":null,"stdout":null,"stderr":null`,
				ok, 2+i%700, i%1000, code, typ, msg)
		}
		b.WriteString("}\n")
	}
	return b.Bytes()
}

func opOf(i int) string {
	switch (i / 2) % 4 {
	case 1:
		return "read"
	case 2:
		return "write"
	}
	return "exec"
}

func dataOf(op string, i int) string {
	switch op {
	case "read":
		return fmt.Sprintf(`{"path":"/workspace/src/module_%d.py","user":null}`, i%97)
	case "write":
		return fmt.Sprintf(`{"path":"/workspace/données/out_%d.txt","bytes":%d,"user":null}`, i%97, 100+i%4000)
	}
	d := fmt.Sprintf(`{"command":["python","-m","pytest","-q","tests/test_%d.py"],"timeout_s":30.0,"shell":false,"user":null`, i%97)
	if i%2 == 1 {
		d += `,"exit_code":0`
	}
	return d + "}"
}
