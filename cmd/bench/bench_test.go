package main

import (
	"math"
	"testing"
	"time"

	"stampduty/shared/store/storetest"
)

func TestCost(t *testing.T) {
	warm := usEast1.perMillion(3420*time.Microsecond, storetest.Capacity{Read: 1, Write: 1.1})
	if warm.BilledMs != 4 {
		t.Errorf("billed %v ms, want 4", warm.BilledMs)
	}
	// 4 ms × 0.125 GB × $0.0000133334 per GB-s × 1e6 requests.
	for name, c := range map[string][2]float64{
		"duration": {warm.Duration, 0.0066667},
		"dynamodb": {warm.DynamoDB, 1*0.125 + 1.1*0.625},
		"total":    {warm.Total(), 1 + 0.2 + 0.0066667 + 0.8125},
	} {
		if math.Abs(c[0]-c[1]) > 1e-6 {
			t.Errorf("%s = %.7f, want %.7f", name, c[0], c[1])
		}
	}
	cold := usEast1.perMillion(7800*time.Microsecond, storetest.Capacity{Read: 2, Write: 2})
	// 8 ms billed: 0.0133334; units 2×0.125 + 2×0.625 = 1.5.
	if got, want := cold.Total(), 1+0.2+0.0133334+1.5; math.Abs(got-want) > 1e-6 {
		t.Errorf("cold total = %.7f, want %.7f", got, want)
	}
	if got, want := blended(warm, cold, 0.01), 0.99*warm.Total()+0.01*cold.Total(); math.Abs(got-want) > 1e-12 {
		t.Errorf("blended = %v, want %v", got, want)
	}
}

func TestParseGoBench(t *testing.T) {
	out := `goos: linux
pkg: stampduty/shared/rules
BenchmarkCreateOrderRules-2   	  485235	      2463 ns/op	 192.89 MB/s	     992 B/op	       3 allocs/op
PASS
BenchmarkEncodeOrders   	    7560	    137623 ns/op	  114778 B/op	       3 allocs/op
ok  	stampduty/functions/list-orders	2.807s
`
	got, err := parseGoBench(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []goBench{
		{Name: "BenchmarkCreateOrderRules", Iterations: 485235, NsPerOp: 2463, BytesPerOp: 992, AllocsOp: 3, MBPerS: 192.89},
		{Name: "BenchmarkEncodeOrders", Iterations: 7560, NsPerOp: 137623, BytesPerOp: 114778, AllocsOp: 3},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestDurations(t *testing.T) {
	var d durations
	for i := 10; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	if d.median() != 5500*time.Microsecond || d.min() != time.Millisecond || d.p90() != 9*time.Millisecond {
		t.Errorf("median %v, min %v, p90 %v; want 5.5ms, 1ms, 9ms", d.median(), d.min(), d.p90())
	}
	if d[0] != 10*time.Millisecond {
		t.Error("the sample was sorted in place")
	}
}
