package auditevent

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// Expected spellings are CPython 3.11's repr() of the same bit patterns.
func TestAppendPyFloatMatchesPythonRepr(t *testing.T) {
	cases := []struct {
		bits uint64
		want string
	}{
		{4607182418800017408, "1.0"},
		{4591870180066957722, "0.1"},
		{4846369599423283200, "1e+16"},
		{4831355200913801216, "1000000000000000.0"},
		{4862596447618666293, "1.2345678901234568e+17"},
		{4547007122018943789, "0.0001"},
		{4532020583610935537, "1e-05"},
		{4548686525128629352, "0.00012345"},
		{9097811302482466869, "1.5e+300"},
		{9348005698672734255, "-2.5e-300"},
		{1, "5e-324"},
		{4503599627370496, "2.2250738585072014e-308"},
		{4599676419421066581, "0.3333333333333333"},
		{4903550815785062485, "6.666666666666666e+19"},
		{14159582000407500178, "-1e+22"},
		{4668012723080132769, "12345.6789"},
		{4845873199050653696, "9007199254740992.0"},
		{4845873199050653697, "9007199254740994.0"},
		{17485029721327973432, "-1.989032661366619e+244"},
		{890727360438182992, "3.980498358697587e-249"},
		{3960482443532127989, "6.294675241195386e-44"},
		{0, "0.0"},
		{1 << 63, "-0.0"},
	}
	for _, c := range cases {
		f := math.Float64frombits(c.bits)
		if got := string(appendPyFloat(nil, f)); got != c.want {
			t.Errorf("appendPyFloat(%v) = %q, want %q", f, got, c.want)
		}
	}
}

// Every spelling must read back as the same float.
func TestAppendPyFloatRoundTrips(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		s := string(appendPyFloat(nil, f))
		back, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(back) != math.Float64bits(f) {
			t.Fatalf("%v spelled %q reads back as %v (%v)", f, s, back, err)
		}
	}
}

func TestAppendPyFloatNonFiniteIsNull(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := string(appendPyFloat(nil, f)); got != "null" {
			t.Errorf("appendPyFloat(%v) = %q, want null", f, got)
		}
	}
}

// The fast path writes what the shortest-digits path writes, whenever it
// answers: durations in µs, values near its limits, and random doubles.
func TestAppendMicroFloatMatchesRepr(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 29))
	answered := 0
	check := func(f float64) {
		got, ok := appendMicroFloat(nil, f)
		if !ok {
			return
		}
		answered++
		if want := appendReprFloat(nil, f); string(got) != string(want) {
			t.Fatalf("appendMicroFloat(%v) = %s, want %s", f, got, want)
		}
	}
	for range 300_000 {
		us := rng.Int64N(1 << rng.IntN(50))
		check(float64(us) / 1e6)                             // a duration from time.Duration
		check(-float64(us) / 1e3)                            // ms with three decimals, negative
		check(float64(us) * 1e-6)                            // the same, rounded differently
		check(math.Float64frombits(rng.Uint64()))            // anything
		check(float64(rng.Int64N(1e15)) / 1e6 * (1 + 1e-16)) // near misses
	}
	for _, f := range []float64{1e-4, 0.0001, 9.99e-5, 1e9 - 1e-6, 1e9, 999999999.999999, 30.0, 2.345, 1234.5} {
		check(f)
	}
	if answered < 300_000 {
		t.Fatalf("fast path answered only %d times; the test is not exercising it", answered)
	}
}
