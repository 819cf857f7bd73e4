package main

import (
	"strings"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/bench/load"
)

func TestRoundOrderAlternatesWhoGoesFirst(t *testing.T) {
	targets := []target{{name: "ours"}, {name: "peer"}}
	want := [][2]string{{"ours", "peer"}, {"peer", "ours"}, {"ours", "peer"}, {"peer", "ours"}}
	for r := 1; r <= len(want); r++ {
		got := roundOrder(targets, r)
		if len(got) != 2 || got[0].name != want[r-1][0] || got[1].name != want[r-1][1] {
			t.Fatalf("round %d: %v, want %v", r, got, want[r-1])
		}
	}
	if targets[0].name != "ours" {
		t.Fatal("roundOrder changed its argument")
	}
}

func TestParseShapes(t *testing.T) {
	base := load.Shape{Spans: 10, PerRequest: 5, Sessions: 2}
	got, err := parseShapes("light, sandboxtrace", base)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got[0].Light || got[1].Light || got[1].Spans != 10 || got[0].PerRequest != 5 {
		t.Fatalf("got %+v", got)
	}
	if _, err := parseShapes("heavy", base); err == nil {
		t.Fatal("an unknown shape was accepted")
	}
	got, err = parseShapes(" sandboxtrace ,light ", base)
	if err != nil || len(got) != 2 || got[0].Light || !got[1].Light {
		t.Fatalf("spaces around the names: %+v, %v", got, err)
	}
	_, err = parseShapes("light, heavy ", base)
	if err == nil || !strings.Contains(err.Error(), `unknown shape "heavy" (`) {
		t.Fatalf("the error must quote the name without its spaces: %v", err)
	}
}

func TestTargetsForZstdComparesRotatingCollectorsWithAPlainOne(t *testing.T) {
	got, err := targetsFor(config{ours: "o", baseline: "b", fsync: "batch", vs: "zstd", rotateMB: 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[2].name != "no-rotation" || got[2].segmented || strings.Contains(got[2].config, "rotation") {
		t.Fatalf("the peer is not ours without rotation: %+v", got)
	}
	if !got[0].compressed || got[1].compressed {
		t.Fatalf("only the zstd target waits for compression: %+v", got)
	}
	for i, comp := range []string{"compression: zstd", "compression: none"} {
		if !got[i].segmented || got[i].bin != "o" || !strings.Contains(got[i].config, comp) || !strings.Contains(got[i].config, "max_megabytes: 8") {
			t.Fatalf("target %d: %+v", i, got[i])
		}
	}
	if _, err := targetsFor(config{vs: "zstd"}); err == nil {
		t.Fatal("-rotate-mb 0 accepted")
	}
	if _, err := targetsFor(config{vs: "gzip"}); err == nil {
		t.Fatal("an unknown -vs accepted")
	}
}

func TestRoundOrderReversesThreeTargets(t *testing.T) {
	targets := []target{{name: "a"}, {name: "b"}, {name: "c"}}
	if got := roundOrder(targets, 2); got[0].name != "c" || got[2].name != "a" || targets[0].name != "a" {
		t.Fatalf("round 2: %v (argument now %v)", got, targets)
	}
}
