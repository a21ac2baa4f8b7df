// Package lag computes how far the consumer groups of a topic are behind, partition by
// partition: the one place admin, the CLI, the dashboard and the metrics collector get lag
// from.
//
// A group's lag on a partition is what it still has to deliver there: the entries after its
// last delivered id, less the retry entries of other groups among them (entries carrying
// x-retry-group of another group, which it skips). Its time lag is the age, on the Redis
// server's clock, of the oldest of those entries. Retry entries are told from published
// messages without reading them: the scripts that append one record its id in the group's
// retry index (keys.RetryIndex, a lexicographic zset) and count it
// (keys.RetryCount), so the figures below cost O(G log N) per partition for G groups
// and N retry entries, whatever the backlog:
//
//   - entries after a position: Redis 7's XINFO GROUPS lag, counted (XLEN, or an XRANGE
//     bounded to ScanLimit entries) only where Redis cannot tell (stream.Lags);
//   - other groups' retries after it: one ZLEXCOUNT per other group;
//   - the oldest undelivered entry: XRANGE COUNT 1 after the position, and when that entry is
//     another group's retry, a script that walks on past such entries (at most ScanLimit);
//   - the oldest pending entry: XPENDING - + COUNT 1;
//   - the retry entries a partition holds: one ZLEXCOUNT per group from its first entry.
package lag
