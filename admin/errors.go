package admin

import "errors"

var (
	// ErrGroupNotFound reports a consumer group that exists on no partition of a known topic.
	ErrGroupNotFound = errors.New("consumer group not found")
	// ErrTopicExists reports a CreateTopic of a topic that is already registered.
	ErrTopicExists = errors.New("topic already exists")
)
