//go:build soak

package soak

import (
	"slices"
	"strings"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
)

// deliveryFigures count what each group did with the published messages.
type deliveryFigures struct {
	handledOnce  map[string]int // confirmed messages acked by a handler of the group
	deadLettered map[string]int // confirmed messages in the group's DLQ
	lost         map[string]int // confirmed messages neither acked nor in the DLQ, outside group-destroy windows
	offloaded    int            // confirmed messages with a payload above the threshold
}

// checkDelivery: every message whose Publish returned nil was acked by a handler of each
// group or is in that group's DLQ with a reason; what is in the DLQ is there because the
// handlers asked for it; no handler saw a wrong payload or another group's retry. What a
// group destroy cost inside its window (see destroyWindows) is counted, not failed. No
// message is appended twice: the publishers use the default idempotent append.
func checkDelivery(d *dataset, v *verdict, w *destroyWindows) deliveryFigures {
	f := deliveryFigures{handledOnce: map[string]int{}, deadLettered: map[string]int{}, lost: map[string]int{}}
	for uuid, pub := range d.published {
		if pub.Size > offloadThreshold {
			f.offloaded++
		}
		for _, g := range groups {
			checkMessage(d, v, w, &f, g, uuid, pub)
		}
	}
	checkHandles(d, v)
	if n := appendedTwice(d); n > 0 { // the publishers append idempotently (the default)
		v.fail("appended twice", "%d messages were appended more than once despite the idempotent append", n)
	}
	for _, g := range groups {
		for uuid, dead := range d.dlq[g] {
			checkDeadLetters(d, v, w, g, uuid, dead)
		}
	}
	return f
}

func checkMessage(d *dataset, v *verdict, w *destroyWindows, f *deliveryFigures, g, uuid string, pub event) {
	acked, dead := d.acked(g, uuid), len(d.dlq[g][uuid]) > 0
	switch {
	case acked:
		f.handledOnce[g]++
	case dead && !slices.ContainsFunc(d.dlq[g][uuid], payloadMissing):
		f.deadLettered[g]++
	case dead: // for a missing payload: counted or failed by checkDeadLetters
	case w.excuseLost(d, g, uuid, pub):
	default:
		f.lost[g]++
		v.fail("lost messages", "group %s: %s key %s seq %d partition %d published at %s: never acked, not in the DLQ (%d deliveries)%s",
			g, uuid, pub.Key, pub.Seq, pub.Part, pub.time().Format("15:04:05.000"), len(d.byMsg[g][uuid]), w.near(d, uuid, pub.Part))
	}
	if want, _ := fateOf(uuid, g).wantsDeadLetter(); want && acked {
		v.fail("fate not honoured", "group %s acked %s, whose handlers always dead-letter it", g, uuid)
	}
}

// appendedTwice counts the published messages with more than one first-attempt entry in the
// stream: a client retried an append whose reply it lost (at-least-once on the publishing
// side; handlers see the message twice).
func appendedTwice(d *dataset) int {
	ids := map[string]map[string]bool{}
	for _, hs := range d.handles {
		for _, h := range hs {
			if h.Retry == 0 {
				if ids[h.UUID] == nil {
					ids[h.UUID] = map[string]bool{}
				}
				ids[h.UUID][h.ID] = true
			}
		}
	}
	n := 0
	for _, set := range ids {
		if len(set) > 1 {
			n++
		}
	}
	return n
}

// checkHandles: payloads arrive intact and a group only sees its own retries.
func checkHandles(d *dataset, v *verdict) {
	for g, hs := range d.handles {
		for _, h := range hs {
			if h.Bad != "" {
				v.fail("payload mismatch", "group %s %s key %s seq %d by %s: %s", g, h.UUID, h.Key, h.Seq, h.Proc, h.Bad)
			}
			if h.RGrp != "" && h.RGrp != g {
				v.fail("retry leaked to another group", "group %s got %s, a retry of group %s", g, h.UUID, h.RGrp)
			}
		}
	}
}

// checkDeadLetters: a dead letter has a reason, the reason the handlers gave, an intact
// payload, and a message that was published. A payload gone inside a group-destroy window is
// counted there, not failed.
func checkDeadLetters(d *dataset, v *verdict, w *destroyWindows, g, uuid string, dead []admin.DeadLetter) {
	want, reason := fateOf(uuid, g).wantsDeadLetter()
	for _, dl := range dead {
		missing := payloadMissing(dl)
		switch {
		case dl.Reason == "":
			v.fail("dead letter without a reason", "group %s %s (DLQ id %s)", g, uuid, dl.ID)
		case missing && w.excusePayloadGone(d, g, dl):
		case missing:
			v.fail("payload missing", "group %s %s partition %d: %s%s", g, uuid, dl.Partition, dl.Reason, w.near(d, uuid, dl.Partition))
		case !want || !strings.Contains(dl.Reason, reason):
			v.fail("unexpected dead letter", "group %s %s partition %d: %q", g, uuid, dl.Partition, dl.Reason)
		}
		if bad := verifyPayload(deadLetterMessage(dl)); bad != "" && !missing {
			v.fail("payload mismatch", "dead letter of group %s %s: %s", g, uuid, bad)
		}
	}
	if _, ok := d.published[uuid]; !ok {
		if _, failed := d.failed[uuid]; !failed {
			v.fail("dead letter of an unknown message", "group %s %s", g, uuid)
		}
	}
}

// payloadMissing reports whether the worker dead-lettered dl because its offloaded payload
// was gone.
func payloadMissing(dl admin.DeadLetter) bool {
	return dl.Metadata[streamq.PayloadMissingMetadata] == "true"
}
