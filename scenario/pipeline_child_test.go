package scenario_test

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// The child process of TestEffectivelyOnceThroughKills is this test binary run again with
// -test.run=^TestPipelineChild$ and these variables set: a Router handling topic In into
// topic Out, two outputs per input, that SIGKILLs itself right after a publish of outputs
// returned, before the Router acks the input.
const (
	pipeChildEnv  = "STREAMQ_PIPE_CHILD" // "1" in the child
	pipeAddrEnv   = "STREAMQ_PIPE_ADDR"
	pipeInEnv     = "STREAMQ_PIPE_IN"
	pipeOutEnv    = "STREAMQ_PIPE_OUT"
	pipeDeriveEnv = "STREAMQ_PIPE_DERIVE" // "1": the Router has DeriveUUIDs
	pipeKillEnv   = "STREAMQ_PIPE_KILL"   // the child kills itself after a random 1..2N publishes
)

// pipeGroup is the pipeline stage's consumer group.
const pipeGroup = "stage"

func TestPipelineChild(_ *testing.T) {
	if os.Getenv(pipeChildEnv) != "1" {
		return
	}
	os.Exit(runPipelineChild())
}

func runPipelineChild() int {
	client := redis.NewClient(&redis.Options{Addr: os.Getenv(pipeAddrEnv)})
	sub, err := streamq.NewSubscriber(pipeSubConfig(client), nil)
	if err != nil {
		return 2
	}
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 4}, nil)
	if err != nil {
		return 2
	}
	every, _ := strconv.Atoi(os.Getenv(pipeKillEnv))
	r, err := message.NewRouter(message.RouterConfig{}, nil)
	if err != nil {
		return 2
	}
	if os.Getenv(pipeDeriveEnv) == "1" {
		r.AddMiddleware(streamq.DeriveUUIDs)
	}
	killer := &killAfterPublish{Publisher: pub, left: int64(1 + rand.IntN(2*every))}
	r.AddHandler("stage", os.Getenv(pipeInEnv), sub, os.Getenv(pipeOutEnv), killer, pipeStage)
	if err := r.Run(context.Background()); err != nil {
		return 2
	}
	return 0
}

// pipeStage makes two outputs of each input, each naming its input and its index.
func pipeStage(msg *message.Message) ([]*message.Message, error) {
	out := make([]*message.Message, 2)
	for i := range out {
		out[i] = message.NewMessage(msg.UUID+"-new-"+strconv.Itoa(i), msg.Payload)
		out[i].Metadata.Set("in", msg.Metadata.Get("seq"))
		out[i].Metadata.Set("idx", strconv.Itoa(i))
	}
	return out, nil
}

// pipeSubConfig is the stage's Subscriber: a short lease, so the next child takes over soon.
func pipeSubConfig(client redis.UniversalClient) streamq.SubscriberConfig {
	c := streamqtest.FastSub(client, pipeGroup)
	c.Membership.LeaseTTL = time.Second
	c.Membership.RenewInterval = 200 * time.Millisecond
	return c
}

// killAfterPublish SIGKILLs the process when its left-th publish has returned: the outputs
// are in Redis, the input is not acked.
type killAfterPublish struct {
	*streamq.Publisher
	left int64
	n    atomic.Int64
}

func (k *killAfterPublish) Publish(topic string, msgs ...*message.Message) error {
	err := k.Publisher.Publish(topic, msgs...)
	if err == nil && k.n.Add(1) == k.left {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	return err
}
