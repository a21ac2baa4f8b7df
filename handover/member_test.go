//go:build handover

package handover

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq"
)

// Environment of a member process.
const (
	envRole   = "HANDOVER_ROLE" // "member"
	envAddr   = "HANDOVER_ADDR"
	envTopic  = "HANDOVER_TOPIC"
	envName   = "HANDOVER_NAME"  // "" for a generated name
	envGrace  = "HANDOVER_GRACE" // StaticMemberGrace, a Go duration; "0" for off
	envLedger = "HANDOVER_LEDGER"
)

const group = "g"

// runMember subscribes as one member and, for each delivery, writes "unix-ns partition uuid"
// to its ledger (unbuffered, so a kill loses no line written) and acks. "close" on stdin
// closes the Subscriber gracefully; end of file (the orchestrator died) exits.
func runMember() int {
	ledger, err := os.OpenFile(os.Getenv(envLedger), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer ledger.Close()
	client := redis.NewClient(&redis.Options{Addr: os.Getenv(envAddr)})
	defer client.Close()
	grace, _ := time.ParseDuration(os.Getenv(envGrace))
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{Client: client, ConsumerGroup: group,
		Membership: streamq.MembershipConfig{ConsumerName: os.Getenv(envName), StaticMemberGrace: grace}}, watermill.NewStdLogger(false, false))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	msgs, err := sub.Subscribe(context.Background(), os.Getenv(envTopic))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	closeReq := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if sc.Text() == "close" {
				close(closeReq)
				return
			}
		}
		os.Exit(3)
	}()
	consume(msgs, ledger, closeReq)
	if err := sub.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

func consume(msgs <-chan *message.Message, ledger *os.File, closeReq <-chan struct{}) {
	buf := make([]byte, 0, 96)
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				return
			}
			p, _ := streamq.PartitionFromCtx(m.Context())
			buf = strconv.AppendInt(buf[:0], time.Now().UnixNano(), 10)
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, int64(p), 10)
			buf = append(buf, ' ')
			buf = append(buf, m.UUID...)
			buf = append(buf, '\n')
			_, _ = ledger.Write(buf)
			m.Ack()
		case <-closeReq:
			return
		}
	}
}
