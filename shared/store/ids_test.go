package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/store"
	"stampduty/shared/testkit/storetest"
)

// reserveAll has each of the instances reserve n ids times times, all at
// once, and returns every id handed out, each with how often.
func reserveAll(t *testing.T, instances []*store.IDs, n int64, times int) map[int64]int {
	t.Helper()
	got := map[int64]int{}
	var mu sync.Mutex
	errs := make([]error, len(instances))
	var wg sync.WaitGroup
	for i, ids := range instances {
		wg.Go(func() {
			for range times {
				first, err := ids.Reserve(context.Background(), n)
				if err != nil {
					errs[i] = err
					return
				}
				mu.Lock()
				for id := first; id < first+n; id++ {
					got[id]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return got
}

// checkUnique fails unless got holds want distinct ids, each once, each
// a positive integer above floor and within JSON's safe range.
func checkUnique(t *testing.T, got map[int64]int, want int, floor int64) {
	t.Helper()
	if len(got) != want {
		t.Errorf("%d distinct ids, want %d", len(got), want)
	}
	for id, c := range got {
		if c > 1 {
			t.Errorf("id %d handed out %d times", id, c)
		}
		if id <= floor || id > 1<<53-1 {
			t.Errorf("id %d outside (%d, 2^53-1]", id, floor)
		}
	}
}

// instances returns k id sources over the counters table, a DB handle
// each, as k function instances have.
func instances(env *storetest.Env, k int, block int64) []*store.IDs {
	out := make([]*store.IDs, k)
	for i := range out {
		out[i] = env.DB().IDs(env.Table("CountersTable"), block)
	}
	return out
}

// TestIDsUniqueAcrossShards: 12 instances reserving at once, one id or an
// order's three at a time, in blocks of one chunk so that many shards are
// created (instances racing to create them) and reserved from, never hand
// out one id twice.
func TestIDsUniqueAcrossShards(t *testing.T) {
	for _, n := range []int64{1, 3} {
		t.Run(fmt.Sprintf("%dAtATime", n), func(t *testing.T) {
			env := storetest.New(t)
			got := reserveAll(t, instances(env, 12, 10), n, 400)
			checkUnique(t, got, 12*400*int(n), 0)
			out, err := env.Client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(env.Table("CountersTable"))})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := int(out.Count), store.IDShards/4; got < want {
				t.Errorf("%d counter items, want at least %d", got, want)
			}
		})
	}
}

// TestIDsAboveTheOldCounter: on a stack whose single "id" counter (the
// releases before the shards) stands at 1,234,567, and where an instance
// of the previous release keeps reserving from it while the shards are
// created, every new id is above every id the old counter handed out, and
// no two of them meet.
func TestIDsAboveTheOldCounter(t *testing.T) {
	env := storetest.New(t)
	ctx := context.Background()
	table := env.Table("CountersTable")
	if _, err := env.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
		"name": avS("id"), "value": avN("1234567")}}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var oldLast int64
	wg.Go(func() { // the previous release: blocks of 300 from "id"
		for range 20 {
			out, err := env.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: map[string]types.AttributeValue{"name": avS("id")},
				UpdateExpression: aws.String("ADD #v :n"), ExpressionAttributeNames: map[string]string{"#v": "value"},
				ExpressionAttributeValues: map[string]types.AttributeValue{":n": avN("300")}, ReturnValues: types.ReturnValueUpdatedNew})
			if err != nil {
				t.Error(err)
				return
			}
			fmt.Sscan(out.Attributes["value"].(*types.AttributeValueMemberN).Value, &oldLast)
		}
	})
	got := reserveAll(t, instances(env, 8, store.IDBlock), 3, 200)
	wg.Wait()
	checkUnique(t, got, 8*200*3, oldLast)
	t.Run("AnExistingShardIsNotReset", func(t *testing.T) {
		again := reserveAll(t, instances(env, 4, store.IDBlock), 3, 100)
		for id := range again {
			got[id]++
		}
		checkUnique(t, got, (8*200+4*100)*3, oldLast)
	})
}

// TestIDCounterShare: 20 instances creating 100 orders each (the bench's
// shares run) write the counters table so that no counter item takes more
// than 1/8 of its write units, shard creation included (measured at the
// wire by the metering proxy, per partition key value).
func TestIDCounterShare(t *testing.T) {
	env := storetest.New(t)
	db, proxy := env.ProxiedDB()
	defer proxy.Close()
	ids := make([]*store.IDs, 20)
	for i := range ids {
		ids[i] = db.IDs(env.Table("CountersTable"), store.IDBlock)
	}
	proxy.SetMode(storetest.Account)
	reserveAll(t, ids, 3, 100)
	calls := proxy.Take()
	if err := proxy.Err(); err != nil {
		t.Fatal(err)
	}
	units, total := map[string]float64{}, 0.0
	for _, c := range calls {
		for _, k := range c.Keys {
			units[k.Key] += k.Units
			total += k.Units
		}
	}
	if total == 0 {
		t.Fatal("no write units accounted")
	}
	var keys []string
	for k, u := range units {
		keys = append(keys, k)
		if u > total/8 {
			t.Errorf("counter %s: %.0f of %.0f write units, more than 1/8", k, u, total)
		}
	}
	t.Logf("%.0f write units over %d counter items (%s)", total, len(units), strings.Join(keys, " "))
}
