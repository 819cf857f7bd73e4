package proc

import (
	"math"
	"strings"
	"testing"
)

func TestParseHostTimes(t *testing.T) {
	// A real first line of /proc/stat with guest fields; the per-cpu
	// lines after it must be ignored.
	stat := "cpu  1225580 7 473502 4356666 78665 3 30149 52652 11 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n"
	got, err := parseHostTimes(strings.NewReader(stat))
	if err != nil {
		t.Fatal(err)
	}
	want := HostTimes{Total: 1225580 + 7 + 473502 + 4356666 + 78665 + 3 + 30149 + 52652, Idle: 4356666 + 78665, Steal: 52652}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestParseHostTimesRefusesOtherLines(t *testing.T) {
	for _, stat := range []string{"", "cpu0 1 2 3 4 5 6 7 8\n", "cpu 1 2 3\n", "cpu 1 2 3 4 5 6 7 x\n"} {
		if _, err := parseHostTimes(strings.NewReader(stat)); err == nil {
			t.Errorf("%q: no error", stat)
		}
	}
}

func TestHostTimesSince(t *testing.T) {
	a := HostTimes{Total: 1000, Idle: 400, Steal: 10}
	b := HostTimes{Total: 1200, Idle: 450, Steal: 30}
	idle, steal := b.Since(a)
	if math.Abs(idle-0.25) > 1e-9 || math.Abs(steal-0.10) > 1e-9 {
		t.Fatalf("idle %v steal %v, want 0.25 and 0.10", idle, steal)
	}
	if idle, steal := a.Since(a); idle != 0 || steal != 0 {
		t.Fatalf("no time passed: idle %v steal %v", idle, steal)
	}
}
