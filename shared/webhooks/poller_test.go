package webhooks_test

import (
	"testing"

	"stampduty/shared/webhooks"
)

// TestPoller: the pollers' parts of a sharded key: the zero value reads
// every shard as segment 0 of 1; poller i of n reads the shards s with
// s mod n = i, so each of the 16 is read by exactly one poller; a poller
// outside its count is not one.
func TestPoller(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 16} {
		owners := make([]int, 16)
		for i := range max(n, 1) {
			p := webhooks.Poller{Index: i, Count: n}
			if !p.Valid() {
				t.Errorf("%+v is not valid", p)
			}
			if seg, total := p.Segment(); seg != i || total != max(n, 1) {
				t.Errorf("%+v: segment %d of %d, want %d of %d", p, seg, total, i, max(n, 1))
			}
			for s := range 16 {
				if p.Owns(s) {
					owners[s]++
				}
			}
		}
		for s, c := range owners {
			if c != 1 {
				t.Errorf("%d pollers: shard %d read by %d of them, want 1", n, s, c)
			}
		}
	}
	for _, p := range []webhooks.Poller{{Index: 2, Count: 2}, {Index: -1, Count: 2}, {Index: 1, Count: 0}} {
		if p.Valid() {
			t.Errorf("%+v is valid", p)
		}
	}
}
