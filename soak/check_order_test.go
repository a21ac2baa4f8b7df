//go:build soak

package soak

// orderFigures count redeliveries and order breaks per group.
type orderFigures struct {
	duplicates  map[string]int // deliveries of a (message, retry) seen before
	byRetry     map[string]int // order breaks of a retried message (it comes after later ones)
	byOwner     map[string]int // order breaks across a change of the partition's owner
	stranded    map[string]int // an entry Redis delivered whose delivery reached no handler: a failure
	unexplained map[string]int // order breaks within one owner without a retry: a failure
}

// checkOrder walks each key's deliveries in time order. A delivery of a message with a
// lower sequence number than one delivered before it breaks the order; that is explained
// when it is a retry or when another member delivered the higher one (the partition changed
// owners: a redelivery after a crash or a lost lease). It is not when the entry had been
// delivered by Redis before (delivery count > 1) without reaching any handler: it sat in some
// member's pending list while later entries went out (a read whose reply was lost, a read
// by a member that no longer owned the partition). Only confirmed messages count.
func checkOrder(d *dataset, v *verdict) orderFigures {
	f := orderFigures{duplicates: map[string]int{}, byRetry: map[string]int{}, byOwner: map[string]int{},
		stranded: map[string]int{}, unexplained: map[string]int{}}
	for _, g := range groups {
		keys := map[string]*keyState{}
		stranded := strandedMessages(d.handles[g])
		for _, h := range d.handles[g] {
			if _, ok := d.published[h.UUID]; !ok {
				continue
			}
			k := keys[h.Key]
			if k == nil {
				k = &keyState{seen: map[attempt]bool{}}
				keys[h.Key] = k
			}
			k.observe(g, h, stranded[h.UUID], &f, v)
		}
	}
	return f
}

// strandedMessages finds the messages with an entry whose first handled delivery was not
// Redis's first delivery of it: the entry sat in some member's pending list, unseen. (A
// message can have several entries: a client that retried an append whose reply was lost.)
func strandedMessages(handles []event) map[string]bool {
	out := map[string]bool{}
	seen := map[string]bool{}
	for _, h := range handles {
		if !seen[h.ID] && h.Count > 1 {
			out[h.UUID] = true
		}
		seen[h.ID] = true
	}
	return out
}

// attempt is one delivery attempt of a message: the same entry redelivered has the same one.
type attempt struct {
	uuid    string
	retries int
}

type keyState struct {
	seen   map[attempt]bool
	maxSeq int64
	maxBy  string // the member that delivered maxSeq
}

// observe takes the next delivery of the key; stranded says whether an entry of h's message
// sat in a pending list (delivered by Redis before any handler saw it).
func (k *keyState) observe(g string, h event, stranded bool, f *orderFigures, v *verdict) {
	a := attempt{h.UUID, h.Retry}
	dup := k.seen[a]
	k.seen[a] = true
	switch {
	case dup:
		f.duplicates[g]++
	case h.Seq >= k.maxSeq:
	case h.Retry > 0:
		f.byRetry[g]++
	case stranded:
		f.stranded[g]++
		v.fail("order broken: entry stranded in a pending list", "group %s key %s: %s delivered seq %d (%s, partition %d, id %s, delivery %d, never handled before) after seq %d (by %s)",
			g, h.Key, h.Proc, h.Seq, h.UUID, h.Part, h.ID, h.Count, k.maxSeq, k.maxBy)
	case h.Proc != k.maxBy:
		f.byOwner[g]++
	default:
		f.unexplained[g]++
		v.fail("order broken", "group %s key %s: %s delivered seq %d (%s, partition %d, id %s) after seq %d, with no retry or owner change",
			g, h.Key, h.Proc, h.Seq, h.UUID, h.Part, h.ID, k.maxSeq)
	}
	if h.Seq > k.maxSeq {
		k.maxSeq, k.maxBy = h.Seq, h.Proc
	}
}
