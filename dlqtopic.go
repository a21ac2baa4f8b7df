package streamq

import "github.com/streamq-dev/streamq/internal/keys"

// DLQSuffix ends the Watermill topic name of a topic's dead-letter queue. Topic names ending
// with it are reserved.
const DLQSuffix = ":dlq"

// DLQTopic is the topic to Subscribe to for the dead letters of topic: every partition's DLQ,
// with the same leases, groups and ordering as a normal topic.
func DLQTopic(topic string) string { return topic + DLQSuffix }

// validateTopic checks a topic to publish to: a valid name, and not a DLQ name.
func validateTopic(topic string) error { return keys.ValidateTopic(topic) }
