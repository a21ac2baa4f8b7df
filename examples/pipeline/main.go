// Command pipeline runs a two-stage pipeline and kills its first stage at the worst moment.
// Stage "invoice" (a Router: orders in, two invoices out per order, with streamq.DeriveUUIDs)
// runs in a child process that SIGKILLs itself right after publishing the invoices of order
// 40 and before acking the order. A second process of the stage takes the partition over and
// is handed order 40 again; the invoices it publishes again carry the same derived UUIDs, so
// the Publisher drops them. Stage "ship", in this process, counts what reached topic
// invoices: every order's two invoices, once each.
//
//	go run ./examples/pipeline                  # an embedded Redis (miniredis), shared with the children
//	REDIS_URL=redis://host:6379/0 go run ./examples/pipeline
//	go run ./examples/pipeline -derive=false    # the control: without DeriveUUIDs, duplicates
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/examples/internal/exampleredis"
)

const (
	orders, invoices = "pipeline-orders", "pipeline-invoices"
	stageGroup       = "pipeline-invoicing"
	shipGroup        = "pipeline-shipping"
	partitions       = 4
	count            = 100 // orders
	killAt           = 40  // the first stage dies after publishing the invoices of this order

	stageEnv = "PIPELINE_STAGE" // "kill" or "run" in a child process of the first stage
)

var derive = flag.Bool("derive", true, "give the invoices UUIDs derived from their order (streamq.DeriveUUIDs)")

func main() {
	flag.Parse()
	var err error
	if role := os.Getenv(stageEnv); role != "" {
		err = runStage(role == "kill")
	} else {
		err = run()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pipeline:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client, url, err := exampleredis.ConnectShared(ctx) // the children connect to the same Redis
	if err != nil {
		return err
	}
	defer func() { _ = client.Close() }()
	if err := publishOrders(client); err != nil {
		return err
	}
	shipped, err := ship(ctx, client)
	if err != nil {
		return err
	}
	if err := stage(ctx, url, "kill"); err != nil { // returns once it killed itself
		return err
	}
	fmt.Printf("stage 1 was killed after publishing the invoices of order %d and before acking it\n", killAt)
	second, err := startStage(url, "run")
	if err != nil {
		return err
	}
	defer func() { _ = second.Process.Kill(); _ = second.Wait() }()
	adm, err := admin.New(client, admin.Options{})
	if err != nil {
		return err
	}
	for _, g := range []struct{ topic, group string }{{orders, stageGroup}, {invoices, shipGroup}} {
		if err := waitHandled(ctx, adm, g.topic, g.group); err != nil {
			return err
		}
	}
	return report(shipped)
}

// publishOrders publishes the orders, numbered 1 to count.
func publishOrders(client redis.UniversalClient) error {
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions}, nil)
	if err != nil {
		return err
	}
	defer func() { _ = pub.Close() }()
	msgs := make([]*message.Message, count)
	for i := range msgs {
		msgs[i] = message.NewMessage(watermill.NewUUID(), []byte("order "+strconv.Itoa(i+1)))
		msgs[i].Metadata.Set("order", strconv.Itoa(i+1))
	}
	return pub.Publish(orders, msgs...)
}

// stage runs a child process of the first stage to its end.
func stage(ctx context.Context, url, role string) error {
	cmd, err := startStage(url, role)
	if err != nil {
		return err
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
		return nil
	}
	return fmt.Errorf("stage 1 ended without its kill: %w", errors.Join(err, ctx.Err()))
}

func startStage(url, role string) (*exec.Cmd, error) {
	cmd := exec.Command(os.Args[0], "-derive="+strconv.FormatBool(*derive)) //nolint:gosec // this program itself, as a child
	cmd.Env = append(os.Environ(), stageEnv+"="+role, "REDIS_URL="+url)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd, cmd.Start()
}

// shipped counts the invoices stage "ship" received, by order and index.
type shipped struct {
	mu sync.Mutex
	n  map[string]int
}

// ship consumes the invoices in this process.
func ship(ctx context.Context, client redis.UniversalClient) (*shipped, error) {
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{Client: client, ConsumerGroup: shipGroup}, nil)
	if err != nil {
		return nil, err
	}
	msgs, err := sub.Subscribe(ctx, invoices)
	if err != nil {
		return nil, err
	}
	s := &shipped{n: map[string]int{}}
	go func() {
		for m := range msgs {
			s.mu.Lock()
			s.n[m.Metadata.Get("order")+"/"+m.Metadata.Get("line")]++
			s.mu.Unlock()
			m.Ack()
		}
	}()
	return s, nil
}

// waitHandled waits until group has handled everything on topic.
func waitHandled(ctx context.Context, adm *admin.Admin, topic, group string) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		lag, err := adm.GroupLag(ctx, topic, group)
		switch {
		case errors.Is(err, admin.ErrGroupNotFound):
		case err != nil:
			return err
		case len(lag.Partitions) == partitions && lag.Exact && lag.Lag == 0 && lag.Pending == 0:
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("group %s has %d messages of %s left: %w", group, lag.Lag+lag.Pending, topic, ctx.Err())
		}
	}
}

// report prints what reached the invoices topic, and fails on duplicates with DeriveUUIDs.
func report(s *shipped) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	total, dup := 0, 0
	for _, n := range s.n {
		total += n
		dup += n - 1
	}
	fmt.Printf("%d orders, %d invoices shipped (%d distinct), %d duplicates\n", count, total, len(s.n), dup)
	switch {
	case len(s.n) != 2*count:
		return fmt.Errorf("%d distinct invoices, want %d", len(s.n), 2*count)
	case *derive && dup > 0:
		return fmt.Errorf("%d duplicate invoices with DeriveUUIDs", dup)
	case !*derive:
		fmt.Println("without DeriveUUIDs the invoices of the orders handed over again were appended twice")
	}
	return nil
}
