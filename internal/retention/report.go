package retention

import "github.com/ThreeDotsLabs/watermill"

// Reporter counts what the trims of one partition did: the entries a rule removed, by kind,
// and the groups a trim left out for their group expiry.
type Reporter interface {
	Trimmed(kind string, n int64)
	GroupExpired(group string)
}

// Report counts and logs one trim of a partition by rule kind: "kind" for every entry
// removed and "kind-unacked" for those some group had not acked (only a hard cap or an
// expired group lets a trim remove such entries), and each group it was the first to leave
// out. fields name the partition.
func Report(log watermill.LoggerAdapter, r Reporter, fields watermill.LogFields, kind string, res Trimmed) {
	fields = fields.Add(watermill.LogFields{"rule": kind})
	if res.Removed > 0 {
		r.Trimmed(kind, res.Removed)
		log.Debug("Retention", fields.Add(watermill.LogFields{"removed": res.Removed}))
	}
	for _, g := range res.Expired {
		log.Info("Consumer group expired on the partition: no member was live there for the group expiry, "+
			"retention no longer waits for it (its offsets stay; what it loses is counted and reported when it comes back)",
			fields.Add(watermill.LogFields{"expired_group": g}))
		r.GroupExpired(g)
	}
	if res.Unacked > 0 {
		r.Trimmed(kind+"-unacked", res.Unacked)
		log.Error("Retention removed entries a consumer group had not acked (a hard cap, or an expired group)", nil,
			fields.Add(watermill.LogFields{"removed": res.Removed, "unacked": res.Unacked}))
	}
}
