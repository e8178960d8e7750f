package store_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"stampduty/shared/metrics"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/storetest"
)

// TestThrottlesAndRetriesAreCounted: a store opened as a function opens
// it (store.Open) counts, in the invocation's metrics, each DynamoDB
// answer that throttles (what the DynamoDB throttle alarm watches) and
// each retry the SDK makes, whatever its cause; a call answered at once
// counts neither. The table is made to throttle by the metering proxy's
// faults.
func TestThrottlesAndRetriesAreCounted(t *testing.T) {
	env := storetest.New(t)
	db, proxy := openThroughProxy(t, env)
	articles := db.Articles(env.Table("ArticlesTable"))
	direct := env.DB()
	if _, _, err := direct.Articles(env.Table("ArticlesTable")).Upsert(context.Background(), direct.IDs(env.Table("CountersTable"), 10),
		[]stampduty.Article{article("Affidavit", "Karnataka")}); err != nil {
		t.Fatal(err)
	}
	// faults answers the first n attempts of each call with status and
	// typ, and forwards the rest.
	faults := func(status int, typ string, n int) func(storetest.ProxyCall) *storetest.Fault {
		return func(c storetest.ProxyCall) *storetest.Fault {
			if c.Attempt > n {
				return nil
			}
			return &storetest.Fault{Status: status, Type: typ}
		}
	}
	for _, tc := range []struct {
		name               string
		fault              func(storetest.ProxyCall) *storetest.Fault
		ok                 bool
		throttles, retries float64
	}{
		{"AnsweredAtOnce", nil, true, 0, 0},
		{"ThrottledOnceThenServed", faults(400, "ProvisionedThroughputExceededException", 1), true, 1, 1},
		{"ThrottlingExceptionTwice", faults(400, "ThrottlingException", 2), true, 2, 2},
		{"RequestLimitExceededEveryAttempt", faults(400, "RequestLimitExceeded", 3), false, 3, 2},
		{"ServerErrorRetriedIsNoThrottle", faults(500, "InternalServerError", 1), true, 0, 1},
		{"RefusedIsNeitherThrottleNorRetry", faults(400, "ValidationException", 3), false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxy.SetFault(tc.fault)
			defer proxy.SetFault(nil)
			s := metrics.NewSet(map[string]string{metrics.FunctionName: "CreateOrderFunction"})
			_, err := articles.Get(metrics.With(context.Background(), s), "Affidavit", "Karnataka")
			if got := err == nil; got != tc.ok {
				t.Fatalf("Get = %v; want success %v", err, tc.ok)
			}
			if !tc.ok && stampduty.ErrorCode(err) == "" {
				t.Errorf("Get = %v; want a rules error", err)
			}
			got := map[metrics.Name]float64{}
			var buf bytes.Buffer
			if err := s.Flush(&buf, "StampDuty/test", time.Now()); err != nil {
				t.Fatal(err)
			}
			for line := range strings.Lines(buf.String()) {
				points, _, err := metrics.Read([]byte(line))
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range points {
					if got, want := p.Dimensions[metrics.FunctionName], "CreateOrderFunction"; got != want || len(p.Dimensions) != 1 {
						t.Errorf("%s dimensions %v; want FunctionName %s alone", p.Name, p.Dimensions, want)
					}
					for _, v := range p.Values {
						got[p.Name] += v
					}
				}
			}
			if got[metrics.DynamoDBThrottles] != tc.throttles || got[metrics.DynamoDBRetries] != tc.retries || len(got) > 2 {
				t.Errorf("metrics %v; want %v throttles and %v retries", got, tc.throttles, tc.retries)
			}
		})
	}

	t.Run("WithoutASetNothingFails", func(t *testing.T) {
		proxy.SetFault(faults(400, "ThrottlingException", 1))
		defer proxy.SetFault(nil)
		if _, err := articles.Get(context.Background(), "Affidavit", "Karnataka"); err != nil {
			t.Fatal(err)
		}
	})
}
