package webhooks

import (
	"reflect"
	"stampduty/shared/stampduty"
	"testing"
)

func TestGroupFailing(t *testing.T) {
	job := func(owner, hook, at string, n int, next string) Job {
		return Job{Owner: owner, Webhook: hook, Pending: stampduty.Pending{At: at}, N: n, Next: next}
	}
	s := func(v string) *string { return &v }
	for _, c := range []struct {
		name string
		jobs []Job
		want []Failing
	}{
		{"NoJobsNoWebhooks", nil, nil},
		{"OneJob", []Job{job("acme", "w1", "2026-11-23T10:00:00.000Z", 2, "2026-11-23T10:02:00.000Z")},
			[]Failing{{Owner: "acme", Webhook: "w1", Waiting: 1, MaxAttempts: 2,
				OldestEventAt: s("2026-11-23T10:00:00.000Z"), NextAttemptAt: s("2026-11-23T10:02:00.000Z")}}},
		{"AWebhooksJobsCountedOnce", []Job{
			job("acme", "w1", "2026-11-23T10:05:00.000Z", 1, "2026-11-23T10:05:30.000Z"),
			job("acme", "w1", "2026-11-23T10:00:00.000Z", 4, "2026-11-23T11:00:00.000Z"),
			job("acme", "w1", "2026-11-23T10:01:00.000Z", 2, "2026-11-23T10:03:00.000Z"),
		}, []Failing{{Owner: "acme", Webhook: "w1", Waiting: 3, MaxAttempts: 4,
			OldestEventAt: s("2026-11-23T10:00:00.000Z"), NextAttemptAt: s("2026-11-23T10:03:00.000Z")}}},
		{"SameDocumentIdOfTwoOwnersApart", []Job{
			job("acme", "w1", "2026-11-23T10:00:00.000Z", 1, "2026-11-23T10:00:30.000Z"),
			job("bolt", "w1", "2026-11-23T09:00:00.000Z", 3, "2026-11-23T09:10:00.000Z"),
		}, []Failing{
			{Owner: "acme", Webhook: "w1", Waiting: 1, MaxAttempts: 1, OldestEventAt: s("2026-11-23T10:00:00.000Z"), NextAttemptAt: s("2026-11-23T10:00:30.000Z")},
			{Owner: "bolt", Webhook: "w1", Waiting: 1, MaxAttempts: 3, OldestEventAt: s("2026-11-23T09:00:00.000Z"), NextAttemptAt: s("2026-11-23T09:10:00.000Z")},
		}},
		{"NoNextIsNoTime", []Job{job("acme", "w1", "2026-11-23T10:00:00.000Z", 7, "")},
			[]Failing{{Owner: "acme", Webhook: "w1", Waiting: 1, MaxAttempts: 7, OldestEventAt: s("2026-11-23T10:00:00.000Z")}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := groupFailing(c.jobs); !reflect.DeepEqual(got, c.want) {
				t.Errorf("groupFailing =\n%+v\nwant\n%+v", got, c.want)
			}
		})
	}
}

func TestWithWebhooks(t *testing.T) {
	s := func(v string) *string { return &v }
	hook := func(owner, doc string, enabled bool) Webhook {
		return Webhook{Owner: owner, DocumentID: doc, URL: "https://" + owner + ".example.com/" + doc, Enabled: enabled}
	}
	group := func(owner, doc, oldest string) Failing {
		return Failing{Owner: owner, Webhook: doc, Waiting: 1, MaxAttempts: 1, OldestEventAt: s(oldest), NextAttemptAt: s(oldest)}
	}
	named := func(f Failing, url string, enabled bool) Failing { f.URL, f.Enabled = url, enabled; return f }
	sets := map[string]Set{
		"acme": {Live: []Webhook{hook("acme", "w1", true), hook("acme", "w2", false)},
			Gone: []Gone{{Webhook: hook("acme", "w9", true)}}},
		"bolt": {Live: []Webhook{hook("bolt", "w1", true)}},
	}
	for _, c := range []struct {
		name     string
		groups   []Failing
		disabled []Webhook
		want     []Failing
	}{
		{"NoneIsAnEmptyList", nil, nil, []Failing{}},
		{"URLAndStateFromTheOwnersSet", []Failing{group("bolt", "w1", "2026-11-23T10:00:00.000Z")}, nil,
			[]Failing{named(group("bolt", "w1", "2026-11-23T10:00:00.000Z"), "https://bolt.example.com/w1", true)}},
		{"ADeletedWebhooksJobsLeftOut", []Failing{group("acme", "w9", "2026-11-23T10:00:00.000Z"), group("carl", "w1", "2026-11-23T10:00:00.000Z")}, nil,
			[]Failing{}},
		{"OldestWaitingFirstThenDisabled", []Failing{
			group("acme", "w1", "2026-11-23T10:00:00.000Z"),
			group("bolt", "w1", "2026-11-23T09:00:00.000Z"),
		}, []Webhook{hook("acme", "w2", false), hook("aaron", "w5", false)}, []Failing{
			named(group("bolt", "w1", "2026-11-23T09:00:00.000Z"), "https://bolt.example.com/w1", true),
			named(group("acme", "w1", "2026-11-23T10:00:00.000Z"), "https://acme.example.com/w1", true),
			{Owner: "aaron", Webhook: "w5", URL: "https://aaron.example.com/w5"},
			{Owner: "acme", Webhook: "w2", URL: "https://acme.example.com/w2"},
		}},
		{"ADisabledWebhookWithJobsListedOnce", []Failing{group("acme", "w2", "2026-11-23T10:00:00.000Z")},
			[]Webhook{hook("acme", "w2", false)},
			[]Failing{named(group("acme", "w2", "2026-11-23T10:00:00.000Z"), "https://acme.example.com/w2", false)}},
		{"TiesByOwnerThenWebhook", []Failing{group("bolt", "w1", "2026-11-23T10:00:00.000Z"), group("acme", "w1", "2026-11-23T10:00:00.000Z")}, nil,
			[]Failing{named(group("acme", "w1", "2026-11-23T10:00:00.000Z"), "https://acme.example.com/w1", true),
				named(group("bolt", "w1", "2026-11-23T10:00:00.000Z"), "https://bolt.example.com/w1", true)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := withWebhooks(c.groups, sets, c.disabled); !reflect.DeepEqual(got, c.want) {
				t.Errorf("withWebhooks =\n%+v\nwant\n%+v", got, c.want)
			}
		})
	}
}
