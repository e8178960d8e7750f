package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"stampduty/cmd/internal/runtimeapi"
)

// subject is one binary whose cold starts are measured, with the request
// its first invocation gets.
type subject struct {
	Name  string
	Fn    runtimeapi.Function
	Event []byte
	Log   *tailWriter
}

// coldResult is the cold starts of one binary.
type coldResult struct {
	Name string
	// Init is process start → first /invocation/next; First the first
	// invocation's wall time through the Runtime API.
	Init, First durations
}

// Total returns the median of init + first invocation, which is what a cold
// request bills on provided.al2023.
func (c coldResult) Total() time.Duration {
	var d durations
	for i := range c.Init {
		d = append(d, c.Init[i]+c.First[i])
	}
	return d.median()
}

// coldStarts starts each subject fresh n times, round-robin (the first
// subject of each round rotates), after one unrecorded warm-up round, and
// records each start's init and first invocation. progress gets a line per
// round.
func coldStarts(ctx context.Context, subs []subject, n int, progress io.Writer) ([]coldResult, error) {
	res := make([]coldResult, len(subs))
	for i, s := range subs {
		res[i].Name = s.Name
	}
	for round := -1; round < n; round++ {
		for k := range subs {
			i := (k + max(round, 0)) % len(subs)
			init, first, err := coldStart(ctx, subs[i])
			if err != nil {
				return nil, err
			}
			if round >= 0 {
				res[i].Init = append(res[i].Init, init)
				res[i].First = append(res[i].First, first)
			}
		}
		if round >= 0 {
			fmt.Fprintf(progress, "\rcold starts: round %d/%d", round+1, n)
		}
	}
	fmt.Fprintln(progress)
	return res, nil
}

// coldStart starts one instance, invokes it once, checks the answer and
// closes it.
func coldStart(ctx context.Context, s subject) (init, first time.Duration, err error) {
	inst, err := runtimeapi.Start(ctx, s.Fn)
	if err != nil {
		return 0, 0, withLog(err, s.Log)
	}
	defer inst.Close()
	init = inst.InitDuration()
	t0 := time.Now()
	out, err := inst.Invoke(ctx, s.Event)
	first = time.Since(t0)
	if err != nil {
		return 0, 0, withLog(err, s.Log)
	}
	if err := checkOK(s.Name, out); err != nil {
		return 0, 0, withLog(err, s.Log)
	}
	return init, first, inst.Close()
}

// coldTable is section 1.
func coldTable(rs []coldResult, n int) *table {
	t := &table{
		Title: "1. Cold start (this host, release flags)",
		Header: []string{"binary", "init median", "init min", "init p90", "× hello init",
			"1st invoke median", "1st invoke min", "1st invoke p90", "init+1st median"},
	}
	var hello time.Duration
	for _, r := range rs {
		if r.Name == helloID {
			hello = r.Init.median()
		}
	}
	for _, r := range rs {
		ratio := "—"
		if hello > 0 {
			ratio = fmt.Sprintf("%.2f", float64(r.Init.median())/float64(hello))
		}
		t.add(r.Name, ms(r.Init.median()), ms(r.Init.min()), ms(r.Init.p90()), ratio,
			ms(r.First.median()), ms(r.First.min()), ms(r.First.p90()), ms(r.Total()))
	}
	t.note("milliseconds; %d fresh starts per binary, round-robin over the binaries after one unrecorded warm-up round", n)
	t.note("init = process start → first /invocation/next (Lambda's Init Duration); 1st invoke = wall time of the first request through the local Runtime API, against dynalite")
	t.note("requests: create-order Affidavit/Karnataka amount 20 with the dev token; list-orders page 1; list-articles page 1; hello any event")
	return t
}
