package consume

import (
	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/position"
)

// Per-key order (DeliveryConfig.OrderByKey): a partition runs up to
// MaxInFlightPerPartition handlers at once while the messages of one partition key are
// handled one after another, in stream order (internal/keyorder holds the rules). A
// handler that settled a message goes on with the next waiting message of the same key.

// dispatchKeyed hands e to a handler, or leaves it waiting behind an earlier message of its
// key; the loop then goes on with other keys while fewer than maxHeld messages wait.
func (w *worker) dispatchKeyed(e position.Entry) bool {
	k, retryOf := w.keyOf(e)
	if !w.order.Admit(k, e, retryOf) {
		return w.waitHeld()
	}
	if !w.takeTurn() {
		return false
	}
	go w.handleKeyed(e, k)
	return true
}

// handleKeyed handles e, then the messages of key k that waited behind it, on one slot.
func (w *worker) handleKeyed(e position.Entry, k string) {
	defer w.handlers.Done()
	defer w.release()
	for {
		next, ok := w.order.Done(k, w.handle(e))
		if !ok || w.isStopping() {
			return // a message still waiting stays pending for the next owner
		}
		if w.gates.Paused() && !w.gates.WaitOpen(w.stop) {
			return
		}
		e = next
	}
}

// waitHeld waits while too many messages wait behind their keys (a hot key's retry with a
// long backoff holds back the rest of the partition only then); false means stop.
func (w *worker) waitHeld() bool {
	for w.order.Held() >= w.cfg.maxHeld {
		select {
		case <-w.order.Freed():
		case <-w.stop:
			return false
		}
	}
	return true
}

// keyOf reads the key an entry is ordered by, and the original id when it is a retry of
// this group's. Entries that do not decode, and other groups' retries (skipped unread),
// are independent.
func (w *worker) keyOf(e position.Entry) (key, retryOf string) {
	msg, err := w.unmarshal(e.Values)
	if err != nil {
		return "", ""
	}
	if g := msg.Metadata.Get(codec.HeaderRetryGroup); g != "" && w.d.rules.retries {
		if g != w.d.group() {
			return "", ""
		}
		retryOf = msg.Metadata.Get(codec.HeaderOriginalID)
	}
	return w.cfg.delivery.PartitionKey(w.d.topic, msg), retryOf
}

// maxHeldByKey is the least number of messages a partition lets wait behind their keys
// (10 read batches when that is more) before its loop waits for one to go.
const maxHeldByKey = 1000
