package admin

import (
	"sync"

	"github.com/streamq-dev/streamq"
)

// importCounts is the import Publisher's metrics: the messages it appended, per partition,
// and those its idempotent append dropped as duplicates.
type importCounts struct {
	streamq.NoopMetrics

	mu          sync.Mutex
	byPartition map[int]int64
	appended    int64
	duplicates  int64
}

var _ streamq.DuplicateReporter = (*importCounts)(nil)

func newImportCounts() *importCounts { return &importCounts{byPartition: map[int]int64{}} }

// Produced implements streamq.MetricsCollector.
func (c *importCounts) Produced(_ string, partition int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.appended++
	c.byPartition[partition]++
}

// DuplicateDropped implements streamq.DuplicateReporter.
func (c *importCounts) DuplicateDropped(string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.duplicates++
}

// totals returns the appended and duplicate counts and a copy of the per-partition counts;
// zeros before the Publisher was made.
func (c *importCounts) totals() (appended, duplicates int64, byPartition map[int]int64) {
	byPartition = map[int]int64{}
	if c == nil {
		return 0, 0, byPartition
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for p, n := range c.byPartition {
		byPartition[p] = n
	}
	return c.appended, c.duplicates, byPartition
}
