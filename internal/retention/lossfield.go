package retention

// LossField is the field of a partition's trim-loss hash (keys.Space.TrimLoss) counting the
// entries hard trimming removed before group acked them, since the partition exists: the
// count Losses returns for group, for readers that fetch one group's count in a pipeline.
func LossField(group string) string { return "total:" + group }

// LossFields are all of group's fields of a partition's trim-loss hash: the cumulative count
// (LossField) and the count TakeLosses takes. Deleting a group removes both.
func LossFields(group string) []string { return []string{LossField(group), "new:" + group} }
