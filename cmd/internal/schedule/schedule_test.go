package schedule

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/samtemplate"
)

// invoker is a fake function: it records each payload and takes `takes`.
type invoker struct {
	takes time.Duration
	// hold, if set, keeps the first run going until it is closed.
	hold     chan struct{}
	started  []time.Time
	mu       sync.Mutex
	payloads [][]byte
	running  int
	most     int
}

// Invoke records the payload and returns after i.takes.
func (i *invoker) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	i.mu.Lock()
	i.payloads = append(i.payloads, payload)
	i.started = append(i.started, time.Now())
	i.running++
	i.most = max(i.most, i.running)
	first := len(i.payloads) == 1
	i.mu.Unlock()
	if first && i.hold != nil {
		<-i.hold
	}
	select {
	case <-time.After(i.takes):
	case <-ctx.Done():
	}
	i.mu.Lock()
	i.running--
	i.mu.Unlock()
	return []byte("null"), nil
}

// calls returns how many times it was invoked.
func (i *invoker) calls() int { i.mu.Lock(); defer i.mu.Unlock(); return len(i.payloads) }

func TestRate(t *testing.T) {
	good := map[string]time.Duration{
		"rate(1 minute)": time.Minute, "rate(5 minutes)": 5 * time.Minute,
		"rate(1 hour)": time.Hour, "rate(2 hours)": 2 * time.Hour, "rate(1 day)": 24 * time.Hour,
	}
	for expr, want := range good {
		if got, err := Rate(expr); err != nil || got != want {
			t.Errorf("Rate(%q) = %s, %v; want %s", expr, got, err, want)
		}
	}
	for _, expr := range []string{"cron(0 3 * * ? *)", "rate(0 minutes)", "rate(x minutes)", "rate(5 seconds)", "rate(5 minutes", "5m"} {
		if got, err := Rate(expr); err == nil {
			t.Errorf("Rate(%q) = %s, want an error", expr, got)
		}
	}
}

// testJobs returns the jobs of testdata/template.yaml with every and
// params (nil: the defaults).
func testJobs(t *testing.T, every time.Duration, params ...string) ([]Job, []string, map[string]Invoker) {
	t.Helper()
	p := map[string]string{}
	for i := 0; i+1 < len(params); i += 2 {
		p[params[i]] = params[i+1]
	}
	tmpl, err := samtemplate.LoadWith("testdata/template.yaml", p)
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]Invoker{"Dispatch": &invoker{}, "Sweep": &invoker{}}
	jobs, skipped, err := Jobs(tmpl, every, targets)
	if err != nil {
		t.Fatal(err)
	}
	return jobs, skipped, targets
}

func TestJobs(t *testing.T) {
	t.Run("EnabledRatesOnTheirOwnPeriods", func(t *testing.T) {
		jobs, skipped, targets := testJobs(t, 0)
		var got []string
		for _, j := range jobs {
			got = append(got, j.Function+"/"+j.Rule+"/"+j.Every.String())
			if j.Target != targets[j.Function] {
				t.Errorf("%s's job invokes another function", j.Function)
			}
		}
		if want := "Dispatch/EveryMinute/1m0s Sweep/EveryTwoHours/2h0m0s"; strings.Join(got, " ") != want {
			t.Errorf("jobs = %v, want %s", got, want)
		}
		if len(skipped) != 1 || !strings.Contains(skipped[0], "Nightly") {
			t.Errorf("skipped = %q, want the cron rule", skipped)
		}
	})
	t.Run("InputsAndStatesFollowTheParameters", func(t *testing.T) {
		for _, c := range []struct {
			params []string
			want   string
		}{
			{nil, `EveryMinute {"poller": 0, "pollers": 1}; EveryTwoHours `},
			{[]string{"Pollers", "2"}, `EveryMinute {"poller": 0, "pollers": 2}; SecondPoller {"poller": 1, "pollers": 2}; EveryTwoHours `},
		} {
			jobs, _, _ := testJobs(t, 0, c.params...)
			var got []string
			for _, j := range jobs {
				got = append(got, j.Rule+" "+string(j.Input))
			}
			if strings.Join(got, "; ") != c.want {
				t.Errorf("%v: jobs and inputs = %q, want %s", c.params, got, c.want)
			}
		}
	})
	t.Run("EveryOverridesEachPeriod", func(t *testing.T) {
		jobs, _, _ := testJobs(t, 2*time.Second)
		for _, j := range jobs {
			if j.Every != 2*time.Second {
				t.Errorf("%s runs every %s, want 2s", j.Rule, j.Every)
			}
		}
	})
	t.Run("NoneWithoutSchedules", func(t *testing.T) {
		jobs, skipped, err := Jobs(&samtemplate.Template{Functions: []samtemplate.Function{{LogicalID: "F"}}}, time.Second, nil)
		if err != nil || len(jobs) != 0 || len(skipped) != 0 {
			t.Errorf("Jobs = %v, %v, %v; want none", jobs, skipped, err)
		}
	})
	t.Run("FunctionNotRunningIsAnError", func(t *testing.T) {
		tmpl, _ := samtemplate.Load("testdata/template.yaml")
		if _, _, err := Jobs(tmpl, 0, map[string]Invoker{"Dispatch": &invoker{}}); err == nil {
			t.Error("Jobs without Sweep's invoker succeeded")
		}
	})
}

func TestRun(t *testing.T) {
	t.Run("OnTheScheduleWithAScheduledEvent", func(t *testing.T) {
		fn := &invoker{}
		ctx, cancel := context.WithTimeout(context.Background(), 230*time.Millisecond)
		defer cancel()
		Run(ctx, []Job{{Function: "Dispatch", Rule: "EveryMinute", Every: 50 * time.Millisecond, Target: fn}}, "ap-south-1", &functest.SyncBuffer{})
		if n := fn.calls(); n < 4 || n > 6 {
			t.Errorf("%d runs in 230 ms every 50 ms, want 5 (one at once, then one a period)", n)
		}
		var ev struct {
			DetailType string   `json:"detail-type"`
			Source     string   `json:"source"`
			Region     string   `json:"region"`
			Resources  []string `json:"resources"`
			Time       string   `json:"time"`
		}
		if err := json.Unmarshal(fn.payloads[0], &ev); err != nil {
			t.Fatal(err)
		}
		if ev.DetailType != "Scheduled Event" || ev.Source != "aws.events" || ev.Region != "ap-south-1" ||
			len(ev.Resources) != 1 || !strings.HasSuffix(ev.Resources[0], ":rule/EveryMinute") {
			t.Errorf("payload = %s, want a Scheduled Event of rule EveryMinute", fn.payloads[0])
		}
		if _, err := time.Parse(time.RFC3339, ev.Time); err != nil {
			t.Errorf("time %q: %v", ev.Time, err)
		}
	})
	t.Run("TheInputIsThePayload", func(t *testing.T) {
		fn := &invoker{}
		ctx, cancel := context.WithTimeout(context.Background(), 130*time.Millisecond)
		defer cancel()
		input := `{"poller": 1, "pollers": 2}`
		Run(ctx, []Job{{Function: "Dispatch", Rule: "SecondPoller", Every: 50 * time.Millisecond, Target: fn, Input: []byte(input)}}, "ap-south-1", &functest.SyncBuffer{})
		fn.mu.Lock()
		defer fn.mu.Unlock()
		if len(fn.payloads) < 2 {
			t.Fatalf("%d runs in 130 ms every 50 ms, want about 3", len(fn.payloads))
		}
		for _, p := range fn.payloads {
			if string(p) != input {
				t.Errorf("payload = %s, want the rule's input %s as it is", p, input)
			}
		}
	})
	t.Run("ARunStillGoingIsNotStartedTwice", func(t *testing.T) {
		fn := &invoker{takes: 120 * time.Millisecond}
		log := &functest.SyncBuffer{}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		Run(ctx, []Job{{Function: "Dispatch", Rule: "EveryMinute", Every: 20 * time.Millisecond, Target: fn}}, "us-east-1", log)
		if fn.most != 1 {
			t.Errorf("%d runs at once, want 1", fn.most)
		}
		if n := fn.calls(); n < 2 || n > 4 {
			t.Errorf("%d runs of 120 ms in 300 ms, want about 3", n)
		}
		if !strings.Contains(log.String(), "skipped: the previous run is still going") {
			t.Errorf("log = %q, want the skipped runs said", log)
		}
	})
	t.Run("APeriodMissedRunsWhenThePreviousRunEnds", func(t *testing.T) {
		// Periods of 200 ms; the first run is held past the first period
		// and released at 250 ms: the next starts then, not at 400 ms.
		fn := &invoker{hold: make(chan struct{})}
		ctx, cancel := context.WithTimeout(context.Background(), 390*time.Millisecond)
		defer cancel()
		begin := time.Now()
		time.AfterFunc(250*time.Millisecond, func() { close(fn.hold) })
		Run(ctx, []Job{{Function: "Dispatch", Rule: "EveryMinute", Every: 200 * time.Millisecond, Target: fn}}, "us-east-1", &functest.SyncBuffer{})
		fn.mu.Lock()
		defer fn.mu.Unlock()
		if len(fn.started) < 2 {
			t.Fatalf("%d runs, want the held one and the one due meanwhile", len(fn.started))
		}
		if at := fn.started[1].Sub(begin); at > 350*time.Millisecond {
			t.Errorf("the second run started at %s, want right after the first ended at 250 ms", at)
		}
		if fn.most != 1 {
			t.Errorf("%d runs at once, want 1", fn.most)
		}
	})
	t.Run("ReturnsWhenTheRunsHave", func(t *testing.T) {
		fn := &invoker{takes: time.Hour}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			Run(ctx, []Job{{Function: "F", Rule: "R", Every: time.Minute, Target: fn}}, "us-east-1", &functest.SyncBuffer{})
			close(done)
		}()
		time.Sleep(20 * time.Millisecond)
		cancel()
		select {
		case <-done:
		case <-time.After(time.Second):
			t.Fatal("Run did not return after its context ended")
		}
		if fn.running != 0 {
			t.Errorf("%d runs still going after Run returned", fn.running)
		}
	})
}
