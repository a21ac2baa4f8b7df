package streamq

import (
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/codec"
)

// xaddCommand is the XADD of msg to stream as one argument list, command name included:
// go-redis's XAdd would copy the fields into a second list. DefaultMarshaler's fields are
// appended in place; a custom Marshaler's map is walked once.
func (p *Publisher) xaddCommand(topic, stream string, msg *message.Message) ([]any, error) {
	args := make([]any, 0, 3+6)
	args = append(args, "xadd", stream, "*")
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
