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

// Metadata keys of one delivery's outcome, set by a handler and read when it is nacked:
// never stored with a retry or a dead letter.
const (
	HeaderOutage = "x-outage"
	HeaderSnooze = "x-snooze"
)

// HeaderSnoozeCount is how many times a message was snoozed (absent: never).
const HeaderSnoozeCount = "x-snooze-count"

// HeaderDerivedFrom is set on a message whose UUID was derived from the message its handler
// consumed ("<consumed UUID>#<output index>"): Publishers drop it by UUID when sent again.
const HeaderDerivedFrom = "x-derived-from"

// Headers set on a dead letter whose offloaded payload was gone when it was read: "true", and
// the payload's reference.
const (
	HeaderPayloadMissing    = "x-payload-missing"
	HeaderPayloadMissingRef = "x-payload-missing-ref"
)

// deliveryMarks are what a handler or a Publish wrote on one delivery of a message, for that
// delivery only: a retry or a dead letter of the message does not carry them.
var deliveryMarks = []string{HeaderRetryGroup, HeaderReplay, HeaderDrop, HeaderPublishedPartition,
	HeaderPublishedStreamID, HeaderOutage, HeaderSnooze}

// ClearDeliveryMarks removes from md what was asked of one delivery: the retry group it was
// delivered to, a Replay or Drop, a Publish's results (the handler may have published the
// message), an Outage or a Snooze.
func ClearDeliveryMarks(md map[string]string) {
	for _, k := range deliveryMarks {
		delete(md, k)
	}
}

// ReplayAllGroups is HeaderReplay's value for a replay delivered to every group (any other
// value replays to the group that failed the message).
const ReplayAllGroups = "all-groups"
