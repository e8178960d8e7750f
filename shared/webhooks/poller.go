package webhooks

// Poller names one of the dispatcher's pollers: poller Index of Count
// (0 ≤ Index < Count). The zero value is the only poller. The pollers
// share the outbox and the due jobs out between them so that no item is
// read by two of them (see DECISIONS.md, "Scaling past one poller"): poller
// i of n scans segment i of n of the outbox index (a parallel Scan), and
// reads the due shards s with s mod n = i (the jobs stored before the
// sharding, under the unsharded key, are poller 0's).
type Poller struct{ Index, Count int }

// Segment returns p's segment of a parallel Scan and how many there are:
// the zero value (or a Count below 2) is segment 0 of 1, the whole.
func (p Poller) Segment() (segment, total int) {
	if p.Count < 2 {
		return 0, 1
	}
	return p.Index, p.Count
}

// Owns reports whether shard (of a sharded index key, from 0) is p's to
// read.
func (p Poller) Owns(shard int) bool {
	i, n := p.Segment()
	return shard%n == i
}

// Valid reports whether p names a poller: 0 ≤ Index < Count, or the zero
// value.
func (p Poller) Valid() bool {
	return p == Poller{} || (p.Count > 0 && p.Index >= 0 && p.Index < p.Count)
}
