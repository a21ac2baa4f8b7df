package outbox

import (
	"context"

	wsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/message"
)

// softSubscriber is the watermill-sql Subscriber as the forwarder's router sees it: a
// Subscribe that fails returns a closed channel instead, and keeps the error. The router
// (watermill v1.5.1) counts a handler as started when it is added, and a handler whose
// Subscribe failed never as stopped: its Run would return, but a goroutine waiting for
// that handler would stay, and Close would wait CloseTimeout for it. With a closed
// channel the handler starts and stops at once, the router closes, and Run reports err.
type softSubscriber struct {
	*wsql.Subscriber
	err error // of the last Subscribe; read after the router's Run returned
}

func (s *softSubscriber) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	ch, err := s.Subscriber.Subscribe(ctx, topic)
	if err != nil {
		s.err = err
		closed := make(chan *message.Message)
		close(closed)
		return closed, nil
	}
	return ch, nil
}
