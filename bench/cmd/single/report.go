package main

import (
	"fmt"

	"github.com/sandboxaudit/sandboxaudit/bench/stats"
)

// results are events/s per collector and client count, one per round.
type results map[string]map[int][]float64

func (r results) add(name string, clients int, rate float64) {
	if r[name] == nil {
		r[name] = map[int][]float64{}
	}
	r[name][clients] = append(r[name][clients], rate)
}

func (r results) median(name string, clients int) float64 {
	return stats.Median(r[name][clients])
}

// print gives the medians per collector and client count, and the ratios
// of the first (ours) to the others.
func (r results) print(targets []target, clients []int) {
	fmt.Println()
	fmt.Printf("%-8s", "clients")
	for _, t := range targets {
		fmt.Printf(" %15s", t.name)
	}
	for _, t := range targets[1:] {
		fmt.Printf(" %28s", targets[0].name+" / "+t.name)
	}
	fmt.Println("   (median events/s)")
	for _, n := range clients {
		fmt.Printf("%-8d", n)
		for _, t := range targets {
			fmt.Printf(" %15.0f", r.median(t.name, n))
		}
		for _, t := range targets[1:] {
			fmt.Printf(" %28.2f", r.median(targets[0].name, n)/r.median(t.name, n))
		}
		fmt.Println()
	}
}
