package publish

import (
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/codec"
)

// xaddCommand is the XADD of msg to stream as one argument list, command name included:
// go-redis's XAdd would copy the fields into a second list. The default entry format's
// fields (Config.Marshal nil) are appended in place; a Marshal func's map is walked once.
func (e *Engine) xaddCommand(topic, stream string, msg *message.Message) ([]any, error) {
	args := make([]any, 0, 3+6)
	args = append(args, "xadd", stream, "*")
	if e.cfg.Marshal == nil {
		return codec.AppendArgs(args, msg.UUID, msg.Metadata, msg.Payload)
	}
	values, err := e.cfg.Marshal(topic, msg)
	if err != nil {
		return nil, err
	}
	for k, v := range values {
		args = append(args, k, v)
	}
	return args, nil
}
