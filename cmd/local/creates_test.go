package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"stampduty/shared/testkit/localdb"
)

// checkConcurrentCreates sends s 200 creates at once by one caller: any
// answer but 200 is 503 with Retry-After, each success is listed once and
// the total is exact; most succeed. How many is a throughput figure, logged,
// not a rule: the share that finishes inside the 6 s budget is set by how
// fast one single-threaded dynalite serves the burst beside everything else
// on the machine (88-100% on a quiet 2-core one, under 70% beside other test
// runs). The floor of 75% is for a retry loop that gives up on a lost seq
// instead of trying the next. CONCURRENT_CREATES lowers the count on a small
// machine.
func checkConcurrentCreates(t *testing.T, s *stack) {
	n := 200
	if v, err := strconv.Atoi(os.Getenv("CONCURRENT_CREATES")); err == nil && v > 0 {
		n = v
	}
	before := listAll(t, s.URL)
	var wg sync.WaitGroup
	type result struct {
		status     int
		retryAfter string
		orderID    string
		body       string
	}
	results := make(chan result, n)
	start := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"amount":20,"considerationPrice":0,"purpose":"Affidavit","state":"Karnataka","paidBy":"First Party","firstPartyMobileNumber":"9876543210","firstPartyName":"Party %d","secondPartyName":"B"}`, i)
			req, _ := http.NewRequest("POST", s.URL+"/api/live-orders", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+localdb.DevToken)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			var created struct {
				OrderID string `json:"orderId"`
			}
			json.Unmarshal(b, &created)
			results <- result{resp.StatusCode, resp.Header.Get("Retry-After"), created.OrderID, string(b)}
		}()
	}
	wg.Wait()
	close(results)
	took := time.Since(start)
	created := map[string]bool{}
	for r := range results {
		switch {
		case r.status == 200 && r.orderID != "":
			created[r.orderID] = true
		case r.status == 503 && r.retryAfter != "" && strings.Contains(r.body, "ServiceUnavailableError"):
		default:
			t.Errorf("status %d: %s", r.status, r.body)
		}
	}
	rate := float64(len(created)) / float64(n)
	t.Logf("%d concurrent creates: %d succeeded (%.1f%%) in %v", n, len(created), 100*rate, took.Round(time.Millisecond))
	if rate < 0.75 {
		t.Errorf("%.1f%% succeeded, want at least 75%%", 100*rate)
	}
	after := listAll(t, s.URL)
	if got, want := after.total, before.total+len(created); got != want {
		t.Errorf("total %d, want %d", got, want)
	}
	listed := map[string]int{}
	for _, id := range after.ids {
		listed[id]++
	}
	for id := range created {
		if listed[id] != 1 {
			t.Errorf("order %s listed %d times", id, listed[id])
		}
	}
	if len(listed) != len(after.ids) || len(after.ids) != after.total {
		t.Errorf("%d listed, %d distinct, total %d", len(after.ids), len(listed), after.total)
	}
}

// orderList is every order of the dev caller, read page by page.
type orderList struct {
	total int
	ids   []string
}

func listAll(t *testing.T, base string) orderList {
	t.Helper()
	var out orderList
	for page := 1; ; page++ {
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/live-orders?page=%d&pageSize=100", base, page), nil)
		req.Header.Set("Authorization", "Bearer "+localdb.DevToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Data []struct {
				DocumentID string `json:"documentId"`
			} `json:"data"`
			Pagination struct {
				Total     int `json:"total"`
				PageCount int `json:"pageCount"`
			} `json:"pagination"`
		}
		err = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("list page %d: %d %v", page, resp.StatusCode, err)
		}
		out.total = list.Pagination.Total
		for _, o := range list.Data {
			out.ids = append(out.ids, o.DocumentID)
		}
		if page >= list.Pagination.PageCount {
			return out
		}
	}
}
