package streamq

import (
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/codec"
)

// xaddCommand is the XADD of msg to stream as one argument list, command name included:
// go-redis's XAdd would copy the fields into a second list. DefaultMarshaler's fields are
// appended in place; a custom Marshaler's map is walked once.
func (p *Publisher) xaddCommand(topic, stream string, msg *message.Message) ([]any, error) {
	args := make([]any, 0, 3+len(p.trim)+6)
	args = append(args, "xadd", stream)
	args = append(args, p.trim...)
	args = append(args, "*")
	if _, ok := p.config.Marshaler.(DefaultMarshaler); ok {
		return codec.AppendArgs(args, msg.UUID, msg.Metadata, msg.Payload)
	}
	values, err := p.config.Marshaler.Marshal(topic, msg)
	if err != nil {
		return nil, err
	}
	for k, v := range values {
		args = append(args, k, v)
	}
	return args, nil
}

// trimArgs are XADD's MAXLEN arguments for maxLen (none when it is not positive), built once
// per Publisher.
func trimArgs(maxLen int64, exact bool) []any {
	if maxLen <= 0 {
		return nil
	}
	op := "~"
	if exact {
		op = "="
	}
	return []any{"maxlen", op, maxLen}
}
