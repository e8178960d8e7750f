// Package schedule runs a SAM template's scheduled functions locally, as
// EventBridge does on AWS: each enabled Schedule event whose expression is a
// rate(…) invokes its function with its Input as the payload, or without
// one a "Scheduled Event", once when the stack is ready and then once a
// period; cron(…) is not run locally. Which events are enabled, and their
// inputs, follow the template's parameter values (samtemplate.LoadWith).
// A job runs once at a time (on AWS two runs may overlap, and the functions
// allow for it), so that slow local runs do not pile up: a period that ends
// while a run is going starts the next as soon as it returns (a function
// that polls for about its period, as the webhook dispatch does, then polls
// without a gap), and any further period missed meanwhile is skipped, with
// a line to the log.
package schedule

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"stampduty/shared/testkit/samtemplate"
)

// Invoker invokes a function with a payload. *runtimeapi.Pool is one.
type Invoker interface {
	Invoke(ctx context.Context, payload []byte) ([]byte, error)
}

// Job is one schedule to run: a rule of a function, its period, the
// function's invoker and the rule's Input, the payload of each run (nil:
// a Scheduled Event).
type Job struct {
	Function string
	Rule     string
	Every    time.Duration
	Target   Invoker
	Input    []byte
}

// payload is what a run of j started at t sends: its Input as it is, as
// EventBridge sends a rule's constant input, else a Scheduled Event.
func (j Job) payload(region string, t time.Time) []byte {
	if j.Input != nil {
		return j.Input
	}
	return Event(j.Rule, region, t)
}

// Rate reads a rate expression, "rate(N minute|minutes|hour|hours|day|days)",
// as its period.
func Rate(expr string) (time.Duration, error) {
	inner, ok := strings.CutPrefix(expr, "rate(")
	if !ok || !strings.HasSuffix(inner, ")") {
		return 0, fmt.Errorf("schedule %q: only rate(…) is run locally", expr)
	}
	n, unit, _ := strings.Cut(strings.TrimSuffix(inner, ")"), " ")
	v, err := strconv.Atoi(n)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("schedule %q: the rate is not a positive whole number", expr)
	}
	units := map[string]time.Duration{"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour}
	d, ok := units[strings.TrimSuffix(unit, "s")]
	if !ok {
		return 0, fmt.Errorf("schedule %q: the unit is not minute(s), hour(s) or day(s)", expr)
	}
	return time.Duration(v) * d, nil
}

// Jobs returns the jobs of the template's enabled Schedule events, each
// invoking targets[function's logical id], every `every` when it is
// positive, else on its own rate. It also returns a note for each enabled
// schedule it does not run (a cron expression).
func Jobs(t *samtemplate.Template, every time.Duration, targets map[string]Invoker) (jobs []Job, skipped []string, err error) {
	for _, f := range t.Functions {
		for _, s := range f.Schedules {
			if !s.Enabled {
				continue
			}
			if strings.HasPrefix(s.Expression, "cron(") {
				skipped = append(skipped, fmt.Sprintf("%s's %s, %s: cron schedules are not run locally", f.LogicalID, s.Name, s.Expression))
				continue
			}
			d, err := Rate(s.Expression)
			if err != nil {
				return nil, nil, fmt.Errorf("%s's %s: %w", f.LogicalID, s.Name, err)
			}
			if every > 0 {
				d = every
			}
			target, ok := targets[f.LogicalID]
			if !ok {
				return nil, nil, fmt.Errorf("%s's %s: the function is not running", f.LogicalID, s.Name)
			}
			j := Job{Function: f.LogicalID, Rule: s.Name, Every: d, Target: target}
			if s.Input != "" {
				j.Input = []byte(s.Input)
			}
			jobs = append(jobs, j)
		}
	}
	return jobs, skipped, nil
}

// Event returns the payload EventBridge sends a function for a scheduled
// rule triggered at t, in region and the local account.
func Event(rule, region string, t time.Time) []byte {
	id := make([]byte, 16)
	rand.Read(id)
	b, _ := json.Marshal(map[string]any{
		"version":     "0",
		"id":          fmt.Sprintf("%x-%x-%x-%x-%x", id[:4], id[4:6], id[6:8], id[8:10], id[10:]),
		"detail-type": "Scheduled Event",
		"source":      "aws.events",
		"account":     "000000000000",
		"time":        t.UTC().Format(time.RFC3339),
		"region":      region,
		"resources":   []string{"arn:aws:events:" + region + ":000000000000:rule/" + rule},
		"detail":      map[string]any{},
	})
	return b
}

// Run runs each job at once and then every job.Every until ctx ends,
// logging each failed or skipped run, and returns once every run it started
// has returned.
func Run(ctx context.Context, jobs []Job, region string, log io.Writer) {
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() { runJob(ctx, j, region, log) })
	}
	wg.Wait()
}

// runJob runs one job until ctx ends.
func runJob(ctx context.Context, j Job, region string, log io.Writer) {
	t := time.NewTicker(j.Every)
	defer t.Stop()
	for {
		done := make(chan struct{})
		go func() {
			defer close(done)
			if _, err := j.Target.Invoke(ctx, j.payload(region, time.Now())); err != nil && ctx.Err() == nil {
				fmt.Fprintf(log, "local: scheduled run of %s (%s) failed: %v\n", j.Function, j.Rule, err)
			}
		}()
		due := false // a period ended during the run: the next starts when it returns
		for running := true; running; {
			select {
			case <-ctx.Done():
				<-done
				return
			case <-done:
				running = false
			case <-t.C:
				if due {
					fmt.Fprintf(log, "local: scheduled run of %s (%s) skipped: the previous run is still going\n", j.Function, j.Rule)
				}
				due = true
			}
		}
		if !due {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}
}
