package codec

// Metadata keys streamq reads and writes (the seed's header names where it has one).
const (
	HeaderRetryCount     = "x-retry-count"
	HeaderOriginalID     = "x-original-message-id"
	HeaderMaxRetries     = "x-max-retries"
	HeaderLastError      = "x-last-error"
	HeaderRetryGroup     = "x-retry-group"
	HeaderDeadLetter     = "x-dead-letter-reason"
	HeaderReplay         = "x-dlq-replay"
	HeaderDrop           = "x-dlq-drop"
	HeaderReplayedFrom   = "x-replayed-from"
	HeaderForcePartition = "x-force-partition-id"
)
