package webhooks

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"stampduty/shared/stampduty"
)

// Failing is a webhook an operator should look at (stampctl webhooks
// failing): one with events still waiting after failed attempts, or one a
// receiver's 410 disabled.
type Failing struct {
	// Owner is the caller's name, the same for its test and live webhooks
	// (never the test principal's key): Livemode tells which.
	Owner string `json:"owner"`
	// Livemode is false for a webhook registered with a test token.
	Livemode bool `json:"livemode"`
	// Webhook is the webhook's documentId.
	Webhook string `json:"webhook"`
	URL     string `json:"url"`
	Enabled bool   `json:"enabled"`
	// Waiting is how many events wait for it: jobs not done with at least
	// the asked number of attempts.
	Waiting int `json:"waiting"`
	// OldestEventAt is the createdAt of the oldest waiting event, nil when
	// none waits.
	OldestEventAt *string `json:"oldest_event_at"`
	// MaxAttempts is the most attempts a waiting event has had.
	MaxAttempts int `json:"max_attempts"`
	// LastAttempt is the webhook's newest attempt (of any event), nil when
	// it has none.
	LastAttempt *Attempt `json:"last_attempt"`
	// NextAttemptAt is when the soonest waiting event is due again, nil
	// when none waits.
	NextAttemptAt *string `json:"next_attempt_at"`
}

// FailingJobs is what Failures reads of the deliveries (store.Deliveries).
type FailingJobs interface {
	// Failing returns the jobs not done that have had at least minAttempts
	// attempts, across all webhooks.
	Failing(ctx context.Context, minAttempts int) ([]Job, error)
	// Attempts returns the newest limit attempts of the webhook, newest first.
	Attempts(ctx context.Context, owner, webhook string, limit int) ([]Attempt, error)
}

// DisabledHooks is what Failures reads of the webhooks (store.Webhooks).
type DisabledHooks interface {
	// Webhooks returns owner's set.
	Webhooks(ctx context.Context, owner string) (Set, error)
	// Disabled returns every caller's live webhooks that are disabled.
	Disabled(ctx context.Context) ([]Webhook, error)
}

// Failures returns the webhooks whose deliveries keep failing, for
// operators: each live webhook with jobs not done after at least
// minAttempts attempts, and each disabled one, with its newest attempt.
// It reads the failing jobs, each of their owners' webhooks once, the
// disabled webhooks, and one newest attempt per webhook listed. Jobs of a
// deleted webhook are left out: the dispatcher stops them.
func Failures(ctx context.Context, jobs FailingJobs, hooks DisabledHooks, minAttempts int) ([]Failing, error) {
	js, err := jobs.Failing(ctx, minAttempts)
	if err != nil {
		return nil, fmt.Errorf("read the failing jobs: %w", err)
	}
	groups := groupFailing(js)
	sets := map[string]Set{}
	for _, f := range groups {
		if _, ok := sets[f.Owner]; ok {
			continue
		}
		s, err := hooks.Webhooks(ctx, f.Owner)
		if err != nil {
			return nil, fmt.Errorf("read the webhooks of %s: %w", f.Owner, err)
		}
		sets[f.Owner] = s
	}
	disabled, err := hooks.Disabled(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the disabled webhooks: %w", err)
	}
	list := withWebhooks(groups, sets, disabled)
	for i, f := range list {
		atts, err := jobs.Attempts(ctx, f.Owner, f.Webhook, 1)
		if err != nil {
			return nil, fmt.Errorf("read the last attempt of webhook %s: %w", f.Webhook, err)
		}
		if len(atts) > 0 {
			list[i].LastAttempt = &atts[0]
		}
	}
	for i := range list { // read by owner key above; shown by the caller's name
		list[i].Owner, list[i].Livemode = stampduty.CallerOf(list[i].Owner)
	}
	return list, nil
}

// groupFailing groups jobs by webhook: how many, the oldest event's time,
// the most attempts, the soonest next attempt. Webhooks come in the order
// of their first job.
func groupFailing(jobs []Job) []Failing {
	var out []Failing
	at := map[[2]string]int{}
	for _, j := range jobs {
		k := [2]string{j.Owner, j.Webhook}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, Failing{Owner: j.Owner, Webhook: j.Webhook})
		}
		f := &out[i]
		f.Waiting++
		f.MaxAttempts = max(f.MaxAttempts, j.N)
		f.OldestEventAt = earliest(f.OldestEventAt, j.At)
		f.NextAttemptAt = earliest(f.NextAttemptAt, j.Next)
	}
	return out
}

// earliest returns the earlier of *cur and t (times in stampduty.TimeLayout
// sort as strings); "" counts as no time.
func earliest(cur *string, t string) *string {
	if t == "" || cur != nil && *cur <= t {
		return cur
	}
	return &t
}

// withWebhooks completes groups with their webhooks' URL and state from
// sets (by owner), drops the groups whose webhook is not live (deleted),
// adds the disabled webhooks that have no group, and sorts the list: the
// webhooks with waiting events first, oldest event first, then the others
// by owner and documentId.
func withWebhooks(groups []Failing, sets map[string]Set, disabled []Webhook) []Failing {
	out := []Failing{}
	listed := map[[2]string]bool{}
	for _, f := range groups {
		i := slices.IndexFunc(sets[f.Owner].Live, func(w Webhook) bool { return w.DocumentID == f.Webhook })
		if i < 0 {
			continue
		}
		w := sets[f.Owner].Live[i]
		f.URL, f.Enabled = w.URL, w.Enabled
		listed[[2]string{f.Owner, f.Webhook}] = true
		out = append(out, f)
	}
	for _, w := range disabled {
		if !listed[[2]string{w.Owner, w.DocumentID}] {
			listed[[2]string{w.Owner, w.DocumentID}] = true
			out = append(out, Failing{Owner: w.Owner, Webhook: w.DocumentID, URL: w.URL, Enabled: w.Enabled})
		}
	}
	slices.SortFunc(out, func(a, b Failing) int {
		switch {
		case (a.OldestEventAt == nil) != (b.OldestEventAt == nil):
			if a.OldestEventAt != nil {
				return -1
			}
			return 1
		case a.OldestEventAt != nil:
			if c := cmp.Compare(*a.OldestEventAt, *b.OldestEventAt); c != 0 {
				return c
			}
		}
		return cmp.Or(cmp.Compare(a.Owner, b.Owner), cmp.Compare(a.Webhook, b.Webhook))
	})
	return out
}
