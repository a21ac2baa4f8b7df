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

// Metadata keys of a Publish's results (where each message went): set on the caller's message
// only, never stored: Encode and AppendArgs leave them out of every entry.
const (
	HeaderPublishedPartition = "x-streamq-partition"
	HeaderPublishedStreamID  = "x-streamq-stream-id"
)
