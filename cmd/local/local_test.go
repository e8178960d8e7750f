package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
)

// startStack runs the local stack as `make local` does, with env as its
// environment (free ports unless env says otherwise). stop ends it and
// waits; it also runs when the test ends.
func startStack(t *testing.T, env map[string]string) (s *stack, out *functest.SyncBuffer, stop func()) {
	t.Helper()
	if env == nil {
		env = map[string]string{"LOCAL_ADDR": "127.0.0.1:0", "LOCAL_DYNAMODB_ADDR": "127.0.0.1:0", "LOCAL_S3_ADDR": "127.0.0.1:0"}
	}
	out = &functest.SyncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *stack, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, options{getenv: func(k string) string { return env[k] }, out: out, ready: func(s *stack) { ready <- s }})
	}()
	select {
	case s = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("local stack did not start: %v\n%s", err, out)
	case <-time.After(3 * time.Minute):
		cancel()
		t.Fatalf("local stack did not start in time\n%s", out)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return s, out, stop
}

func TestLocalStack(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is needed to run the README's examples")
	}
	s, out, _ := startStack(t, nil)

	t.Run("NoSchedulesWithoutScheduleEvents", func(t *testing.T) {
		n := 0
		for _, f := range s.tmpl.Functions {
			n += len(f.Schedules)
		}
		if n == 0 && (len(s.schedules) != 0 || s.stopSchedules != nil) {
			t.Errorf("the template has no Schedule events, yet the stack runs %d schedules", len(s.schedules))
		}
		if n > 0 && len(s.schedules) == 0 {
			t.Errorf("the template has %d Schedule events, yet the stack runs none", n)
		}
	})
	// The webhooks walk-through waits about 30 s for a retry: it runs
	// beside the other examples, under its own caller.
	walk := startWalkthrough(t, s)
	t.Run("ReadmeExamples", func(t *testing.T) {
		// The examples of every document that has some (README.md first),
		// but the walk-through's, which runs as one script above.
		type example struct{ doc, want, code string }
		var examples []example
		for _, d := range exampleDocs(t) {
			if d == walkthroughDoc {
				continue
			}
			for _, ex := range readmeExamples(doc(t, d)) {
				examples = append(examples, example{d, ex[0], ex[1]})
			}
		}
		if len(examples) < 8 {
			t.Fatalf("found %d examples with an expectation, want at least 8", len(examples))
		}
		t.Logf("running %d examples of %v", len(examples), exampleDocs(t))
		root := moduleRoot(t)
		env := exampleEnv(s, t.TempDir())
		for _, ex := range examples {
			// As a reader runs them: from the repository's top, with API, DB
			// and WORK set as the README says, to this stack (on ports
			// that are not the defaults) and a folder of the test's. The
			// examples are run as written: nothing in them is replaced.
			cmd := exec.Command("bash", "-euo", "pipefail", "-c", ex.code)
			cmd.Dir, cmd.Env = root, env
			got, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("an example of %s failed: %v\n%s\n%s", ex.doc, err, ex.code, got)
				continue
			}
			if !strings.Contains(string(got), ex.want) {
				t.Errorf("an example of %s answered\n%s\nwant it to contain %s\n(example: %s)", ex.doc, got, ex.want, ex.code)
			}
		}
	})

	t.Run("WebhooksWalkthrough", walk.check)

	t.Run("StrapiClient", func(t *testing.T) {
		// The API as Strapi's official client sees it: cmd/local/strapiclient's
		// node --test suite (installed by `make strapiclient`, which make test
		// runs) against this stack, with the dev token.
		dir := filepath.Join(moduleRoot(t), "cmd", "local", "strapiclient")
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@strapi", "client", "package.json")); err != nil {
			t.Fatalf("@strapi/client is not installed (run make strapiclient): %v", err)
		}
		cmd := exec.Command("node", "--test", "--test-reporter=spec", "client.test.js")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "STAMPDUTY_API_URL="+s.URL, "STAMPDUTY_TOKEN="+localdb.DevToken, "NO_COLOR=1")
		got, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("node --test client.test.js: %v\n%s", err, got)
		}
		// The spec reporter's summary: every test ran and none failed.
		tests := 0
		if m := regexp.MustCompile(`(?m)^ℹ tests (\d+)$`).FindSubmatch(got); m != nil {
			tests, _ = strconv.Atoi(string(m[1]))
		}
		if tests < 10 || !regexp.MustCompile(`(?m)^ℹ fail 0$`).Match(got) {
			t.Errorf("node --test client.test.js: want at least 10 tests and none failing:\n%s", got)
		}
	})

	t.Run("RequestsRunWarm", func(t *testing.T) {
		pool := s.pools["ListArticlesFunction"]
		for i := 0; i < 5; i++ {
			resp, err := http.Get(s.URL + "/api/stamp-duty-datas")
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
		}
		if got := pool.Started(); got != 1 {
			t.Errorf("5 sequential requests started %d instances, want 1 (warm reuse)", got)
		}
	})

	t.Run("ConcurrentCreates", func(t *testing.T) {
		// 200 creates at once by one caller: any answer but 200 is 503 with
		// Retry-After, each success is listed once and the total is exact;
		// most succeed. How many is a throughput figure, logged, not a rule:
		// the share that finishes inside the 6 s budget is set by how fast
		// one single-threaded dynalite serves the burst beside everything
		// else on the machine (88-100% on a quiet 2-core one, under 70%
		// beside other test runs). The floor of 75% is for a retry loop that
		// gives up on a lost seq instead of trying the next.
		// CONCURRENT_CREATES lowers the count on a small machine.
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
	})

	t.Run("HostileRequests", func(t *testing.T) { checkHostile(t, s, out) })

	t.Run("FunctionLogsShown", func(t *testing.T) {
		logs := out.String()
		for _, want := range []string{`[CreateOrderFunction] {"time"`, `"msg":"request"`, `"route":"POST /api/live-orders"`, `"caller":"dev"`, "Dev token", "GET  " + s.URL + "/api/live-orders -> ListOrdersFunction"} {
			if !strings.Contains(logs, want) {
				t.Errorf("output lacks %s", want)
			}
		}
		// The README examples and the creates above sent these; the
		// functions' log lines (the output after the banner) hold none.
		_, functionLogs, _ := strings.Cut(logs, "Ctrl-C stops everything.")
		for _, personal := range []string{"ABCDE1234F", "9876543210", "Asha Rao", "Vikram Shah", "MG Road", "Rent for flat 4B", "Party 1", localdb.DevToken} {
			if strings.Contains(functionLogs, personal) {
				t.Errorf("function logs contain %q", personal)
			}
		}
		for _, route := range []string{`"route":"POST /api/live-orders"`, `"route":"GET /api/live-orders"`, `"route":"GET /api/stamp-duty-datas"`} {
			if !strings.Contains(functionLogs, route) {
				t.Errorf("function logs lack %s", route)
			}
		}
	})
}

// exampleEnv is the environment the examples run in: this
// process's, with API, DB and WORK set, as the README's API section has a
// reader set them, to the stack s and the folder work.
func exampleEnv(s *stack, work string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "API", "DB", "WORK", "HOOK_ADDR", "DYNAMODB_ENDPOINT", "STAMPDUTY_API_URL":
		default:
			env = append(env, kv)
		}
	}
	return append(env, "API="+s.URL, "DB="+s.Endpoint, "WORK="+work)
}

// TestStopsEverything: when the stack stops, no function instance or
// database process is left.
func TestStopsEverything(t *testing.T) {
	s, _, stop := startStack(t, nil)
	resp, err := http.Get(s.URL + "/api/stamp-duty-datas")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	tmp, dbPid := s.tmp, s.db.Pid()
	stop()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("build directory %s left behind", tmp)
	}
	if alive(dbPid) {
		t.Errorf("dynalite (pid %d) still running", dbPid)
	}
	if _, err := http.Get(s.URL + "/api/stamp-duty-datas"); err == nil {
		t.Error("API still answering")
	}
	if got := s.pools["ListArticlesFunction"].Live(); got != 0 {
		t.Errorf("%d function instances still live", got)
	}
}

// TestGivenEngineAndCatalogue: with DYNAMODB_ENDPOINT the stack uses that
// engine and starts none; with ARTICLES it seeds that file instead of the sample.
func TestGivenEngineAndCatalogue(t *testing.T) {
	db, err := localdb.Start(context.Background(), moduleRoot(t), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Stop()
	file := filepath.Join(t.TempDir(), "one.json")
	os.WriteFile(file, []byte(`[{"purpose_name":"Will","state":"Goa","min":5,"max":5,"fixed":5,"toFollowConsiderationPrice":false,"amountPercentConsideration":null}]`), 0o600)
	s, _, stop := startStack(t, map[string]string{"LOCAL_ADDR": "127.0.0.1:0", "DYNAMODB_ENDPOINT": db.Endpoint, "LOCAL_S3_ADDR": "127.0.0.1:0", "ARTICLES": file})
	defer stop()
	if s.db != nil || s.Endpoint != db.Endpoint {
		t.Errorf("stack started its own engine (%s), want the given %s", s.Endpoint, db.Endpoint)
	}
	resp, err := http.Get(s.URL + "/api/stamp-duty-datas")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"purpose_name":"Will"`) || !strings.Contains(string(body), `"total":1`) {
		t.Errorf("articles = %s, want only the ARTICLES file's", body)
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
