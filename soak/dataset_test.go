//go:build soak

package soak

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/admin"
)

// dataset is what the ledgers and the dead-letter queues say happened.
type dataset struct {
	events    []event          // every ledger event, in time order
	published map[string]event // uuid -> Publish returned nil
	failed    map[string]event // uuid -> Publish returned an error
	handles   map[string][]event
	byMsg     map[string]map[string][]event            // group -> uuid -> handles
	dlq       map[string]map[string][]admin.DeadLetter // group -> uuid -> dead letters
	dlqCount  map[string]int
	ends      map[string]event  // proc -> its clean end
	groupOf   map[string]string // consumer proc -> group
	torn      int
}

func loadDataset(ctx context.Context, dir string, client redis.UniversalClient) (*dataset, error) {
	events, torn, err := readLedgers(dir)
	if err != nil {
		return nil, err
	}
	d := &dataset{events: events, torn: torn, published: map[string]event{}, failed: map[string]event{},
		handles: map[string][]event{}, byMsg: map[string]map[string][]event{},
		dlq: map[string]map[string][]admin.DeadLetter{}, dlqCount: map[string]int{},
		ends: map[string]event{}, groupOf: map[string]string{}}
	for _, e := range events {
		d.add(e)
	}
	return d, d.loadDLQ(ctx, client)
}

func (d *dataset) add(e event) {
	switch e.Ev {
	case evPublished:
		d.published[e.UUID] = e
	case evPubFailed:
		d.failed[e.UUID] = e
	case evHandled:
		d.handles[e.Group] = append(d.handles[e.Group], e)
		if d.byMsg[e.Group] == nil {
			d.byMsg[e.Group] = map[string][]event{}
		}
		d.byMsg[e.Group][e.UUID] = append(d.byMsg[e.Group][e.UUID], e)
	case evEnd:
		d.ends[e.Proc] = e
	case evStart:
		if e.Group != "" {
			d.groupOf[e.Proc] = e.Group
		}
	}
}

// loadDLQ reads every dead letter of the topic.
func (d *dataset) loadDLQ(ctx context.Context, client redis.UniversalClient) error {
	a, err := admin.New(client, admin.Options{})
	if err != nil {
		return fmt.Errorf("admin: %w", err)
	}
	dead, err := a.DLQEntries(ctx, topic, 1<<24)
	if err != nil {
		return fmt.Errorf("read the DLQ: %w", err)
	}
	for _, dl := range dead {
		if d.dlq[dl.Group] == nil {
			d.dlq[dl.Group] = map[string][]admin.DeadLetter{}
		}
		d.dlq[dl.Group][dl.UUID] = append(d.dlq[dl.Group][dl.UUID], dl)
		d.dlqCount[dl.Group]++
	}
	return nil
}

// acked reports whether a handler of group acked message uuid at least once.
func (d *dataset) acked(group, uuid string) bool {
	for _, h := range d.byMsg[group][uuid] {
		if h.Res == resAck {
			return true
		}
	}
	return false
}
