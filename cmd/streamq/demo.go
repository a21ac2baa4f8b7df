package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/keys"
)

// orderMetadata carries the order number (1..Messages) of a demo message, so the handler can
// check the per-key order.
const orderMetadata = "order_no"

// memberNames are the two consumer-group members of the demo.
var memberNames = []string{"member-a", "member-b"}

// DemoConfig configures Demo. Zero fields take the defaults of the demo flags.
type DemoConfig struct {
	// RedisURL is a redis:// or rediss:// URL (or several comma-separated, for a Cluster);
	// "" starts an embedded miniredis.
	RedisURL string
	// Cluster connects to RedisURL as a Redis Cluster.
	Cluster bool
	// StreamPrefix and ControlPrefix are the key prefixes ("": the library's defaults).
	StreamPrefix, ControlPrefix string
	// Topic is the topic name; on a real Redis a random suffix is added so reruns don't mix.
	Topic string
	// Group is the consumer group of the two members.
	Group string
	// Partitions is the partition count of the topic.
	Partitions int
	// Messages is how many messages are published.
	Messages int
	// Keys is how many distinct partition keys (customers) the messages use.
	Keys int
	// Timeout bounds the whole demo.
	Timeout time.Duration
	// Keep leaves the topic's keys in a real Redis (they are deleted by default).
	Keep bool
	// Verbose writes the library's and routers' info and debug logs to Log too.
	Verbose bool
	// Log receives library and router logs: errors always, the rest when Verbose. nil: discard.
	Log io.Writer
}

func (c *DemoConfig) setDefaults() {
	if c.Topic == "" {
		c.Topic = "orders"
	}
	if c.Group == "" {
		c.Group = "demo"
	}
	if c.Partitions == 0 {
		c.Partitions = 4
	}
	if c.Messages == 0 {
		c.Messages = 40
	}
	if c.Keys == 0 {
		c.Keys = 8
	}
	if c.Timeout == 0 {
		c.Timeout = 30 * time.Second
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
}

func (c *DemoConfig) validate() error {
	switch {
	case c.Partitions < 1 || c.Partitions > 1024:
		return fmt.Errorf("--partitions must be in 1..1024, got %d", c.Partitions)
	case c.Messages < 1:
		return fmt.Errorf("--messages must be at least 1, got %d", c.Messages)
	case c.Keys < 1:
		return fmt.Errorf("--keys must be at least 1, got %d", c.Keys)
	case c.Timeout <= 0:
		return fmt.Errorf("--timeout must be positive, got %s", c.Timeout)
	}
	if err := keys.ValidateName("topic", c.Topic); err != nil {
		return err
	}
	return keys.ValidateName("consumer group", c.Group)
}

// MemberResult is what one group member handled.
type MemberResult struct {
	Name       string
	Leased     []int    // partitions it held when publishing started
	Partitions []int    // partitions it handled messages from
	Messages   int      // handler calls
	Keys       []string // keys it handled
}

// DemoResult is the outcome of Demo.
type DemoResult struct {
	Embedded   bool   // an embedded miniredis was used
	RedisAddr  string // host:port of the Redis used
	Topic      string
	Published  int
	Handled    int // distinct messages handled
	Deliveries int // handler calls (more than Handled when something was redelivered)
	Members    []MemberResult
	// KeyMembers lists, per key, the members that handled it.
	KeyMembers map[string][]string
	// KeyOrder lists, per key, the order numbers in the order they were handled.
	KeyOrder map[string][]int
	// OrderKept: every key's messages were handled in publish order.
	OrderKept bool
	// LibraryErrors counts errors logged by streamq and the routers.
	LibraryErrors int64
	Elapsed       time.Duration
}

// demoCmd is "streamq demo": the demo as a cobra command. It uses the global --redis-url
// (else $REDIS_URL) and --cluster; with neither URL it starts an embedded miniredis.
func demoCmd(a *app) *cobra.Command {
	cfg := &DemoConfig{}
	cmd := &cobra.Command{
		Use:     "demo",
		Example: "  streamq demo\n  REDIS_URL=redis://127.0.0.1:6379 streamq demo --partitions 8 --messages 200 --keep",
		Short:   "Run two consumer-group members on a partitioned topic and show who handles what",
		Long: `Publishes keyed messages to a partitioned topic and consumes them with two members of
one consumer group, each through its own Watermill router, then checks that every key
was handled by one member, in publish order.

Without --redis-url and $REDIS_URL it runs on an embedded miniredis; on a real Redis the
topic gets a random suffix and its keys are deleted afterwards (unless --keep).`,
		GroupID: groupOther,
		Args:    argsExactly(),
		RunE: a.runE(func(cmd *cobra.Command, _ []string) error {
			cfg.RedisURL = a.url("")
			cfg.Cluster = a.cluster
			cfg.StreamPrefix, cfg.ControlPrefix = a.streamPrefix, a.controlPrefix
			return runDemo(cmd.Context(), cfg, a.stdout, a.stderr)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Topic, "topic", "orders", "topic name (a random suffix is added on a real Redis)")
	f.StringVar(&cfg.Group, "group", "demo", "consumer group of the two members")
	f.IntVar(&cfg.Partitions, "partitions", 4, "partitions of the topic")
	f.IntVar(&cfg.Messages, "messages", 40, "messages to publish")
	f.IntVar(&cfg.Keys, "keys", 8, "distinct partition keys (customer-1..customer-N)")
	durationVar(f, &cfg.Timeout, "timeout", 30*time.Second, "give up when the demo has not finished after this long")
	f.BoolVar(&cfg.Keep, "keep", false, "leave the demo topic's keys in a real Redis (deleted by default)")
	f.BoolVar(&cfg.Verbose, "verbose", false, "also print streamq's and Watermill's info and debug logs to stderr")
	return cmd
}

// runDemo validates cfg (a usage error when invalid) and runs the demo, logging to stderr.
func runDemo(ctx context.Context, cfg *DemoConfig, stdout, stderr io.Writer) error {
	cfg.Log = stderr
	if !cfg.Verbose {
		// go-redis logs every failed dial itself; the demo reports the error once.
		redis.SetLogger(quietRedisLogger{})
	}
	if err := cfg.validate(); err != nil {
		return &usageError{err: err}
	}
	if _, err := Demo(ctx, *cfg, stdout); err != nil {
		return fmt.Errorf("error: %w", err)
	}
	return nil
}

// Demo runs the demo, writing what happens to out. It returns the result, and an error when
// the demo could not run or a check failed (the result is then still filled as far as it got).
func Demo(ctx context.Context, cfg DemoConfig, out io.Writer) (*DemoResult, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()

	d := &demo{cfg: cfg, out: out, logger: newDemoLogger(cfg.Log, cfg.Verbose), res: &DemoResult{}}
	defer func() { d.res.Elapsed = time.Since(start) }()
	d.printf("streamq demo: Kafka-style partitioned topics on Redis Streams, with Watermill\n\n")

	rc, err := connect(ctx, cfg.RedisURL, cfg.Cluster)
	if err != nil {
		return d.res, err
	}
	defer rc.close()
	d.client = rc.client
	d.res.Embedded, d.res.RedisAddr = rc.embedded, rc.addr
	d.topic = cfg.Topic
	if rc.embedded {
		d.printf("no REDIS_URL set: using an embedded miniredis at %s\n", rc.addr)
	} else {
		d.topic += "-" + strings.ToLower(rand.Text()[:6])
		d.printf("using Redis at %s\n", rc.display)
	}
	d.res.Topic = d.topic
	d.printf("\nTopic %q has %d partitions. Consumer group %q has two members, %s and %s,\n"+
		"each a streamq Subscriber run by its own Watermill router. Each partition is leased to\n"+
		"one member at a time. A message's partition_key picks its partition (murmur2, as in\n"+
		"Kafka), so all messages of one key are handled by one member, in publish order.\n\n",
		d.topic, cfg.Partitions, cfg.Group, memberNames[0], memberNames[1])

	err = d.run(ctx)
	if !rc.embedded && !cfg.Keep {
		d.deleteKeys()
	}
	if err != nil && ctx.Err() != nil {
		if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			err = fmt.Errorf("%w (the demo timed out after %s)", err, cfg.Timeout)
		} else {
			err = fmt.Errorf("%w (interrupted)", err)
		}
	}
	d.res.LibraryErrors = d.logger.errors.Load()
	if err != nil {
		return d.res, err
	}
	d.printf("\ndone in %s\n", time.Since(start).Round(time.Millisecond))
	return d.res, nil
}

// demo is the state of one Demo run.
type demo struct {
	cfg    DemoConfig
	out    io.Writer
	logger *demoLogger
	client redis.UniversalClient
	topic  string
	res    *DemoResult

	members []*member

	mu        sync.Mutex // guards out and everything below
	published map[string][]int
	seen      map[int]int // order number -> handler calls
	distinct  int         // order numbers 1..Messages handled at least once
	handled   []handledMsg
	done      chan struct{}
}

type member struct {
	name   string
	sub    *streamq.Subscriber
	router *message.Router
	runErr chan error // receives router.Run's result
}

type handledMsg struct {
	member, key, streamID string
	partition, order      int
}

func (d *demo) printf(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintf(d.out, format, args...)
}

func (d *demo) run(ctx context.Context) error {
	cfg := d.cfg
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{
		Client: d.client, DefaultPartitionCount: cfg.Partitions,
		Keyspace: streamq.Keyspace{StreamPrefix: cfg.StreamPrefix, ControlPrefix: cfg.ControlPrefix},
	}, d.logger)
	if err != nil {
		return fmt.Errorf("create publisher: %w", err)
	}
	defer func() { _ = pub.Close() }()

	d.done = make(chan struct{})
	d.seen = map[int]int{}
	d.published = map[string][]int{}

	d.printf("[1/4] starting %s and %s and waiting until they share the partitions\n", memberNames[0], memberNames[1])
	started := time.Now()
	defer func() { _ = d.stopMembers() }()
	if err := d.startMembers(ctx); err != nil {
		return err
	}
	leased, err := d.waitForLeases(ctx)
	if err != nil {
		return err
	}
	for _, m := range d.members {
		d.res.Members = append(d.res.Members, MemberResult{Name: m.name, Leased: leased[m.name]})
	}
	d.printf("      after %s: %s\n\n", time.Since(started).Round(time.Millisecond), describeLeases(leased))

	if err := d.publish(ctx, pub); err != nil {
		return err
	}

	select {
	case <-d.done:
	case <-ctx.Done():
		d.mu.Lock()
		n := d.distinct
		d.mu.Unlock()
		return fmt.Errorf("handled %d of %d messages: %w", n, cfg.Messages, context.Cause(ctx))
	}
	if err := d.stopMembers(); err != nil {
		return err
	}
	return d.summarize()
}

func (d *demo) subscriberConfig(name string) streamq.SubscriberConfig {
	return streamq.SubscriberConfig{
		Client:                d.client,
		Keyspace:              streamq.Keyspace{StreamPrefix: d.cfg.StreamPrefix, ControlPrefix: d.cfg.ControlPrefix},
		DefaultPartitionCount: d.cfg.Partitions,
		ConsumerGroup:         d.cfg.Group,
		Membership:            streamq.MembershipConfig{ConsumerName: name, RebalanceInterval: 200 * time.Millisecond, LeaseTTL: 3 * time.Second, RenewInterval: time.Second},
		// Short intervals so the group converges in about a second.
		Read:     streamq.ReadConfig{BlockTime: 50 * time.Millisecond},
		Delivery: streamq.DeliveryConfig{CloseTimeout: 2 * time.Second},
	}
}

// startMembers starts a Subscriber and a Router per member and waits until both routers run.
func (d *demo) startMembers(ctx context.Context) error {
	for _, name := range memberNames {
		sub, err := streamq.NewSubscriber(d.subscriberConfig(name), d.logger)
		if err != nil {
			return fmt.Errorf("create subscriber %s: %w", name, err)
		}
		router, err := message.NewRouter(message.RouterConfig{CloseTimeout: 5 * time.Second}, d.logger)
		if err != nil {
			_ = sub.Close()
			return fmt.Errorf("create router %s: %w", name, err)
		}
		router.AddConsumerHandler("demo-"+name, d.topic, sub, d.handler(name))
		m := &member{name: name, sub: sub, router: router, runErr: make(chan error, 1)}
		d.members = append(d.members, m)
		go func() { m.runErr <- router.Run(ctx) }()
	}
	for _, m := range d.members {
		select {
		case <-m.router.Running():
		case err := <-m.runErr:
			m.runErr <- err
			return fmt.Errorf("router of %s stopped at start: %w", m.name, err)
		case <-ctx.Done():
			return fmt.Errorf("router of %s did not start: %w", m.name, context.Cause(ctx))
		}
	}
	return nil
}

// stopMembers closes the routers (which close their subscribers: leases released, members
// leave the group) and waits for them. It is idempotent.
func (d *demo) stopMembers() error {
	members := d.members
	d.members = nil
	var errs []error
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := m.router.Close()
			if err == nil {
				t := time.NewTimer(10 * time.Second)
				defer t.Stop()
				select {
				case err = <-m.runErr:
				case <-t.C:
					err = errors.New("router did not stop within 10s")
				}
			}
			if cerr := m.sub.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("stop %s: %w", m.name, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// waitForLeases polls the partition leases until every partition is leased and the two
// members hold a fair share each. It returns each member's partitions.
func (d *demo) waitForLeases(ctx context.Context) (map[string][]int, error) {
	const limit = 15 * time.Second
	space := keys.New(d.cfg.StreamPrefix, d.cfg.ControlPrefix)
	n := d.cfg.Partitions
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	var last map[string][]int
	for {
		cmds := make([]*redis.StringCmd, n)
		_, err := d.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := range cmds {
				cmds[i] = p.Get(ctx, space.Lease(d.topic, i, d.cfg.Group))
			}
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("read partition leases: %w", err)
		}
		last = map[string][]int{}
		leased := 0
		for i, c := range cmds {
			if tok := c.Val(); tok != "" {
				owner := tok
				if j := strings.LastIndexByte(tok, '#'); j >= 0 {
					owner = tok[:j]
				}
				last[owner] = append(last[owner], i)
				leased++
			}
		}
		if leased == n && fairShare(last, n) {
			return last, nil
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return nil, fmt.Errorf("the members did not share the partitions within %s (leases now: %s)", limit, describeLeases(last))
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for partition leases: %w", context.Cause(ctx))
		}
	}
}

// fairShare reports whether the demo members, and only they, hold n/2 partitions each
// (rounded either way).
func fairShare(owners map[string][]int, n int) bool {
	total := 0
	for _, name := range memberNames {
		c := len(owners[name])
		if c < n/len(memberNames) || c > (n+len(memberNames)-1)/len(memberNames) {
			return false
		}
		total += c
	}
	return total == n
}

func describeLeases(owners map[string][]int) string {
	names := slices.Clone(memberNames)
	for name := range owners {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, name := range names {
		if ps := owners[name]; len(ps) > 0 {
			parts = append(parts, fmt.Sprintf("%s leases partitions %v", name, ps))
		} else {
			parts = append(parts, name+" leases no partition")
		}
	}
	return strings.Join(parts, ", ")
}

func customer(i int) string { return "customer-" + strconv.Itoa(i) }

// publish sends the demo messages in one Publish call (one round trip), in order.
func (d *demo) publish(ctx context.Context, pub *streamq.Publisher) error {
	cfg := d.cfg
	keyCount := min(cfg.Keys, cfg.Messages)
	var mapping []string
	for k := 1; k <= keyCount; k++ {
		mapping = append(mapping, fmt.Sprintf("%s->p%d", customer(k), streamq.HashPartitioner{}.Partition(customer(k), cfg.Partitions)))
	}
	d.printf("[2/4] publishing %d orders for %d customers; partition_key picks the partition:\n", cfg.Messages, keyCount)
	d.printf("%s\n\n", wrap(mapping, "      ", 90))

	msgs := make([]*message.Message, 0, cfg.Messages)
	d.mu.Lock()
	for i := 1; i <= cfg.Messages; i++ {
		key := customer((i-1)%cfg.Keys + 1)
		msg := message.NewMessage(watermill.NewUUID(), []byte(fmt.Sprintf("order %d for %s", i, key)))
		msg.Metadata.Set(streamq.PartitionKeyMetadata, key)
		msg.Metadata.Set(orderMetadata, strconv.Itoa(i))
		msg.SetContext(ctx)
		msgs = append(msgs, msg)
		d.published[key] = append(d.published[key], i)
	}
	fmt.Fprintf(d.out, "[3/4] handling: each handler prints one line per message, then acks it\n")
	fmt.Fprintf(d.out, "      %-9s %-5s %-12s %-26s %s\n", "MEMBER", "PART", "KEY", "PAYLOAD", "STREAM ID")
	d.mu.Unlock()

	if err := pub.Publish(d.topic, msgs...); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	d.res.Published = len(msgs)
	return nil
}

func wrap(items []string, indent string, width int) string {
	var b strings.Builder
	line := indent
	for i, it := range items {
		sep := ", "
		if i == len(items)-1 {
			sep = ""
		}
		if len(line)+len(it)+len(sep) > width && line != indent {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line = indent
		}
		line += it + sep
	}
	b.WriteString(line)
	return b.String()
}

// handler is the Watermill handler of one member: it prints the message and acks it.
func (d *demo) handler(name string) message.NoPublishHandlerFunc {
	return func(msg *message.Message) error {
		ctx := msg.Context()
		partition, _ := streamq.PartitionFromCtx(ctx)
		streamID, _ := streamq.StreamIDFromCtx(ctx)
		consumer, ok := streamq.ConsumerFromCtx(ctx)
		if !ok {
			consumer = name
		}
		key := msg.Metadata.Get(streamq.PartitionKeyMetadata)
		order, err := strconv.Atoi(msg.Metadata.Get(orderMetadata))
		if err != nil {
			order = -1
		}

		d.mu.Lock()
		defer d.mu.Unlock()
		fmt.Fprintf(d.out, "      %-9s p%-4d %-12s %-26s %s\n", consumer, partition, key, string(msg.Payload), streamID)
		d.handled = append(d.handled, handledMsg{member: consumer, key: key, streamID: streamID, partition: partition, order: order})
		d.seen[order]++
		if d.seen[order] == 1 && order >= 1 && order <= d.cfg.Messages {
			d.distinct++
			if d.distinct == d.cfg.Messages {
				close(d.done)
			}
		}
		return nil // acks the message
	}
}

// memberTally is what one member handled: its partitions, its keys and its handler calls.
type memberTally struct {
	parts map[int]bool
	keys  map[string]bool
	n     int
}

// summarize fills the result from what the handlers saw, prints the summary and returns an
// error when a check failed.
func (d *demo) summarize() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	res := d.res
	per := d.tally(res)

	fmt.Fprintf(d.out, "\n[4/4] summary\n")
	d.summarizeMembers(res, per)

	var problems []string
	problems = append(problems, d.checkExactlyOnce(res)...)
	problems = append(problems, d.checkOneMemberPerKey(res)...)
	problems = append(problems, d.checkOrder(res)...)
	if n := d.logger.errors.Load(); n > 0 {
		problems = append(problems, fmt.Sprintf("%d errors logged by streamq or Watermill (see stderr)", n))
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("checks failed:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

// tally fills res's counts, members per key and order per key from the handled messages,
// and returns what each member handled, by member name.
func (d *demo) tally(res *DemoResult) map[string]*memberTally {
	res.Deliveries = len(d.handled)
	res.Handled = d.distinct
	res.KeyMembers = map[string][]string{}
	res.KeyOrder = map[string][]int{}
	per := map[string]*memberTally{}
	for _, h := range d.handled {
		a := per[h.member]
		if a == nil {
			a = &memberTally{parts: map[int]bool{}, keys: map[string]bool{}}
			per[h.member] = a
		}
		a.parts[h.partition] = true
		a.keys[h.key] = true
		a.n++
		if !slices.Contains(res.KeyMembers[h.key], h.member) {
			res.KeyMembers[h.key] = append(res.KeyMembers[h.key], h.member)
		}
		res.KeyOrder[h.key] = append(res.KeyOrder[h.key], h.order)
	}
	return per
}

// summarizeMembers fills each member's partitions, keys and message count from per and
// prints a line per member: what it handled, or why it handled nothing.
func (d *demo) summarizeMembers(res *DemoResult, per map[string]*memberTally) {
	for i := range res.Members {
		m := &res.Members[i]
		if a := per[m.Name]; a != nil {
			for p := range a.parts {
				m.Partitions = append(m.Partitions, p)
			}
			sort.Ints(m.Partitions)
			for k := range a.keys {
				m.Keys = append(m.Keys, k)
			}
			sortKeys(m.Keys)
			m.Messages = a.n
		}
		if m.Messages == 0 {
			why := fmt.Sprintf("none of its partitions %v got a message", m.Leased)
			if len(m.Leased) == 0 {
				why = "it leased no partition: there are more members than partitions"
			}
			fmt.Fprintf(d.out, "      %s handled no message (%s)\n", m.Name, why)
			continue
		}
		fmt.Fprintf(d.out, "      %s handled partitions %v: %d messages, keys %s\n",
			m.Name, m.Partitions, m.Messages, strings.Join(m.Keys, " "))
	}
}

// checkExactlyOnce prints whether every published message was handled exactly once and
// returns the problem when not.
func (d *demo) checkExactlyOnce(res *DemoResult) []string {
	dups := res.Deliveries - res.Handled
	exactlyOnce := dups == 0 && res.Handled == res.Published
	fmt.Fprintf(d.out, "      messages handled: %d of %d, each exactly once: %s\n", res.Handled, res.Published, yesNo(exactlyOnce))
	if !exactlyOnce {
		return []string{fmt.Sprintf("%d of %d messages handled with %d deliveries", res.Handled, res.Published, res.Deliveries)}
	}
	return nil
}

// checkOneMemberPerKey prints whether every key was handled by one member and returns a
// problem per key that was not.
func (d *demo) checkOneMemberPerKey(res *DemoResult) []string {
	var problems []string
	oneMember := true
	for key, ms := range res.KeyMembers {
		if len(ms) != 1 {
			oneMember = false
			problems = append(problems, fmt.Sprintf("key %s was handled by %s", key, strings.Join(ms, " and ")))
		}
	}
	fmt.Fprintf(d.out, "      every key handled by exactly one member: %s\n", yesNo(oneMember))
	return problems
}

// checkOrder sets res.OrderKept, prints whether every key's messages were handled in
// publish order and returns a problem per key that was not.
func (d *demo) checkOrder(res *DemoResult) []string {
	var problems []string
	res.OrderKept = true
	for key, want := range d.published {
		if got := res.KeyOrder[key]; !slices.Equal(got, want) {
			res.OrderKept = false
			problems = append(problems, fmt.Sprintf("key %s: handled in order %v, published %v", key, got, want))
		}
	}
	fmt.Fprintf(d.out, "      per-key order kept: %s\n", yesNo(res.OrderKept))
	return problems
}

// sortKeys sorts customer-N keys by N.
func sortKeys(ks []string) {
	sort.Slice(ks, func(i, j int) bool {
		a, _ := strconv.Atoi(strings.TrimPrefix(ks[i], "customer-"))
		b, _ := strconv.Atoi(strings.TrimPrefix(ks[j], "customer-"))
		return a < b
	})
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

// deleteKeys removes the demo topic's keys from a real Redis.
func (d *demo) deleteKeys() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	adm, err := admin.New(d.client, admin.Options{Keyspace: streamq.Keyspace{StreamPrefix: d.cfg.StreamPrefix, ControlPrefix: d.cfg.ControlPrefix}})
	if err == nil {
		_, err = adm.DeleteTopic(ctx, d.topic) // every key of the topic, found by its hash tags
	}
	if err != nil {
		d.printf("could not delete the demo's keys from Redis: %v\n", err)
		return
	}
	d.printf("deleted topic %q's keys from Redis (--keep leaves them)\n", d.topic)
}

// redisConn is the Redis the demo talks to.
type redisConn struct {
	client   redis.UniversalClient
	addr     string // host:port
	display  string // URL without password
	embedded bool
	mini     *miniredis.Miniredis
}

func (r *redisConn) close() {
	_ = r.client.Close()
	if r.mini != nil {
		r.mini.Close()
	}
}

// connect connects to rawURL (a Cluster when cluster is set or rawURL lists several
// addresses, see dial), or starts an embedded miniredis when it is empty.
func connect(ctx context.Context, rawURL string, cluster bool) (*redisConn, error) {
	if rawURL == "" {
		mr, err := miniredis.Run()
		if err != nil {
			return nil, fmt.Errorf("start embedded miniredis: %w", err)
		}
		c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		return &redisConn{client: c, addr: mr.Addr(), display: "redis://" + mr.Addr(), embedded: true, mini: mr}, nil
	}
	c, err := dial(ctx, target{raw: rawURL, source: "from --redis-url or REDIS_URL"}, cluster)
	if err != nil {
		return nil, err
	}
	return &redisConn{client: c.client, addr: c.addr, display: c.display}, nil
}

// demoLogger writes errors always and info/debug logs only when verbose, counting errors.
type demoLogger struct {
	inner   watermill.LoggerAdapter
	verbose bool
	errors  *atomic.Int64
}

func newDemoLogger(w io.Writer, verbose bool) *demoLogger {
	return &demoLogger{inner: watermill.NewStdLoggerWithOut(w, verbose, false), verbose: verbose, errors: &atomic.Int64{}}
}

func (l *demoLogger) Error(msg string, err error, fields watermill.LogFields) {
	l.errors.Add(1)
	l.inner.Error(msg, err, fields)
}

func (l *demoLogger) Info(msg string, fields watermill.LogFields) {
	if l.verbose {
		l.inner.Info(msg, fields)
	}
}

func (l *demoLogger) Debug(msg string, fields watermill.LogFields) {
	if l.verbose {
		l.inner.Debug(msg, fields)
	}
}

func (l *demoLogger) Trace(string, watermill.LogFields) {}

func (l *demoLogger) With(fields watermill.LogFields) watermill.LoggerAdapter {
	return &demoLogger{inner: l.inner.With(fields), verbose: l.verbose, errors: l.errors}
}
