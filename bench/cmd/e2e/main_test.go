package main

import "testing"

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
