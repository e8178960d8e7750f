package functest

// This file holds the check of papers.md's "a number names one paper in
// the whole service" through a function's own route: the operators' API
// and the console each run it over their PATCH of a paper.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/storetest"
)

// Move sends a change of paper (its index) of order o, body the JSON of
// the change, through a function's route.
type Move func(o stampduty.Order, paper int, body string) Response

// numberSeq keeps the numbers CheckNumbers makes apart within a run.
var numberSeq atomic.Int64

// NewNumbers returns a unique_doc_ref and a certificate_number no other
// paper of the test binary's run has: a number names one paper
// (papers.md), so each paper a test numbers needs its own.
func NewNumbers() (ref, cn string) {
	n := numberSeq.Add(1) + time.Now().UnixNano()%1e9*1000
	return fmt.Sprintf("SUBIN-NUMBERS%014d", n), fmt.Sprintf("IN-KA%014dN", n)
}

// Races is what CheckNumbers counted: of each race, the trials run and the
// trials exactly one move won.
type Races struct {
	SameOrder, OtherCallers struct{ Trials, OneWon int }
}

// CheckNumbers checks through move that a number names one paper
// (papers.md): two moves racing with one certificate_number, of two papers
// of one order and of two callers' orders, trials times each, answer one
// 200 and one 409 naming certificate_number, and one paper holds it; and
// a move whose order write fails (503) leaves the number free for another
// paper at once. It returns the races' counts.
func CheckNumbers(t *testing.T, s *Stack, move Move, trials int) Races {
	t.Helper()
	var r Races
	created := func(o stampduty.Order, paper int) {
		t.Helper()
		ref, _ := NewNumbers()
		if resp := move(o, paper, `{"order_status":"Created","unique_doc_ref":"`+ref+`"}`); resp.Status != http.StatusOK {
			t.Fatalf("move to Created: %d %s", resp.Status, resp.Body)
		}
	}
	race := func(a, b func() Response) (won int, lost []Response) {
		var wg sync.WaitGroup
		start := make(chan struct{})
		out := make([]Response, 2)
		for i, f := range []func() Response{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				out[i] = f()
			}()
		}
		close(start)
		wg.Wait()
		for _, resp := range out {
			if resp.Status == http.StatusOK {
				won++
			} else {
				lost = append(lost, resp)
			}
		}
		return won, lost
	}
	procure := func(o stampduty.Order, paper int, cn string) func() Response {
		return func() Response { return move(o, paper, `{"order_status":"Procured","certificate_number":"`+cn+`"}`) }
	}
	tally := func(count *struct{ Trials, OneWon int }, won int, lost []Response) {
		t.Helper()
		count.Trials++
		if won == 1 && len(lost) == 1 && conflictOn(lost[0], "certificate_number") {
			count.OneWon++
			return
		}
		t.Errorf("race %d: %d moves won; the others answered %+v", count.Trials, won, lost)
	}
	for range trials {
		o := AddPapers(t, s.Env, "numbers-one", 2)
		created(o, 0)
		created(o, 1)
		_, cn := NewNumbers()
		won, lost := race(procure(o, 0, cn), procure(o, 1, cn))
		tally(&r.SameOrder, won, lost)
	}
	for range trials {
		x, y := AddOrders(t, s.Env, "numbers-one", 1)[0], AddOrders(t, s.Env, "numbers-two", 1)[0]
		created(x, 0)
		created(y, 0)
		_, cn := NewNumbers()
		won, lost := race(procure(x, 0, cn), procure(y, 0, cn))
		tally(&r.OtherCallers, won, lost)
	}

	// A move whose order write fails releases its claim.
	x, y := AddOrders(t, s.Env, "numbers-one", 1)[0], AddOrders(t, s.Env, "numbers-two", 1)[0]
	ref, _ := NewNumbers()
	orders := s.Env.Table("OrdersTable")
	s.Proxy.SetFault(func(c storetest.ProxyCall) *storetest.Fault {
		if c.Operation == "PutItem" && c.Table == orders {
			return &storetest.Fault{Status: 400, Type: "ThrottlingException"}
		}
		return nil
	})
	resp := move(x, 0, `{"order_status":"Created","unique_doc_ref":"`+ref+`"}`)
	s.Proxy.SetFault(nil)
	if resp.Status != http.StatusServiceUnavailable {
		t.Fatalf("a move whose write fails: %d %s, want 503", resp.Status, resp.Body)
	}
	if resp := move(y, 0, `{"order_status":"Created","unique_doc_ref":"`+ref+`"}`); resp.Status != http.StatusOK {
		t.Errorf("another paper after the failed move: %d %s, want 200 (the failed move's claim released)", resp.Status, resp.Body)
	}
	return r
}

// conflictOn reports whether resp is a 409 ConflictError whose details
// name field.
func conflictOn(resp Response, field string) bool {
	var b struct {
		Error struct {
			Name    string `json:"name"`
			Details struct {
				Errors []struct {
					Path []string `json:"path"`
				} `json:"errors"`
			} `json:"details"`
		} `json:"error"`
	}
	if resp.Status != http.StatusConflict || json.Unmarshal([]byte(resp.Body), &b) != nil || b.Error.Name != "ConflictError" {
		return false
	}
	es := b.Error.Details.Errors
	return len(es) == 1 && len(es[0].Path) == 1 && es[0].Path[0] == field
}
