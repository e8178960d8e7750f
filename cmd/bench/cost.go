package main

import (
	"errors"
	"fmt"
	"math"
	"time"

	"stampduty/shared/store/storetest"
)

// prices are list prices in US dollars.
type prices struct {
	// HTTPAPI and LambdaRequests are per million requests.
	HTTPAPI, LambdaRequests float64
	// GBSecond is Lambda's duration price (arm64) per GB-second; MemoryGB
	// the function's memory.
	GBSecond, MemoryGB float64
	// ReadUnits and WriteUnits are DynamoDB on-demand prices per million
	// read and write request units.
	ReadUnits, WriteUnits float64
}

// usEast1 are us-east-1 list prices as of pricesDate: HTTP API, Lambda
// arm64 at 128 MB, DynamoDB on-demand after the November 2024 price cut.
var usEast1 = prices{HTTPAPI: 1.00, LambdaRequests: 0.20, GBSecond: 0.0000133334, MemoryGB: 0.125, ReadUnits: 0.125, WriteUnits: 0.625}

// pricesDate is when usEast1 was read.
const pricesDate = "2024-11-01"

// coldShare is the share of requests assumed to be cold starts.
const coldShare = 0.01

// cost is the cost of a million requests, by part, in US dollars.
type cost struct {
	BilledMs                              float64
	HTTPAPI, Requests, Duration, DynamoDB float64
}

// Total returns the sum of the parts.
func (c cost) Total() float64 { return c.HTTPAPI + c.Requests + c.Duration + c.DynamoDB }

// perMillion returns the cost of a million requests that each run for d
// (billed per started millisecond) and consume u DynamoDB request units.
func (p prices) perMillion(d time.Duration, u storetest.Capacity) cost {
	billed := math.Ceil(float64(d) / float64(time.Millisecond))
	return cost{
		BilledMs: billed,
		HTTPAPI:  p.HTTPAPI,
		Requests: p.LambdaRequests,
		Duration: billed / 1000 * p.MemoryGB * p.GBSecond * 1e6,
		DynamoDB: u.Read*p.ReadUnits + u.Write*p.WriteUnits,
	}
}

// blended returns the cost of a million requests of which the share cold
// are cold starts.
func blended(warm, cold cost, share float64) float64 {
	return (1-share)*warm.Total() + share*cold.Total()
}

// costTable is section 5: a row per request, warm with its warm row of
// section 4, cold with its function's cold starts (section 1) and cold row.
func costTable(p prices, reqs []request, colds []coldResult, dyn *dynamoResult) (*table, error) {
	t := &table{
		Title: "5. Cost per million requests (US$, us-east-1)",
		Header: []string{"endpoint", "warm ms billed", "HTTP API", "Lambda requests", "Lambda duration", "DynamoDB",
			"total, all warm", "cold ms billed", "total, all cold", fmt.Sprintf("total, %g%% cold", coldShare*100)},
	}
	first := firsts(reqs)
	for _, r := range reqs {
		warmName, coldName := r.rowName("warm"), first[r.Function].rowName("cold")
		wr, ok1 := dyn.row(warmName)
		cr, ok2 := dyn.row(coldName)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("section 4 has no row %q or %q", warmName, coldName)
		}
		_, _, wu, wok := wr.perRequest()
		_, _, cu, cok := cr.perRequest()
		if !wok || !cok {
			return nil, errors.New("section 4: some DynamoDB calls could not be accounted by DynamoDB's rules")
		}
		var coldDur time.Duration
		for _, c := range colds {
			if c.Name == r.Function {
				coldDur = c.Total()
			}
		}
		if coldDur == 0 {
			return nil, fmt.Errorf("no cold starts of %s", r.Function)
		}
		w, c := p.perMillion(wr.Wall.median(), wu), p.perMillion(coldDur, cu)
		t.add(r.Endpoint, num(w.BilledMs, 0), dollars(w.HTTPAPI), dollars(w.Requests), dollars(w.Duration), dollars(w.DynamoDB),
			dollars(w.Total()), num(c.BilledMs, 0), dollars(c.Total()), dollars(blended(w, c, coldShare)))
	}
	t.note("prices: us-east-1 list prices as of %s: HTTP API $%.2f per million requests; Lambda arm64 $%.2f per million requests + $%.10f per GB-second at %g GB (128 MB), billed per 1 ms; DynamoDB on-demand $%.3f per million read request units, $%.3f per million write request units",
		pricesDate, p.HTTPAPI, p.LambdaRequests, p.GBSecond, p.MemoryGB, p.ReadUnits, p.WriteUnits)
	t.note("Lambda duration assumed = the median warm invocation wall time measured in section 4 on this host (through the Runtime API, dynalite round trips included); a 128 MB Lambda has about 128/1769 of a vCPU, so real durations are likely longer")
	t.note("cold: init + first invocation (section 1 medians), billed as provided.al2023 bills init, with the cold row's DynamoDB units (section 4); both list-orders rows take the cold page-1 row; the last column assumes %g%% of requests are cold", coldShare*100)
	t.note("request units by DynamoDB's rules (section 4), means per request; HTTP API requests are metered per 512 KB, every response here is smaller")
	return t, nil
}
