package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq"
)

// publishBatch is how many lines of --lines go into one Publish call (one round trip).
const publishBatch = 100

// maxLine bounds one line of --lines.
const maxLine = 64 << 20

// publishedView is one message of "publish --json".
type publishedView struct {
	UUID      string `json:"uuid"`
	Partition int    `json:"partition"`
	ID        string `json:"id"` // the entry's stream id in its partition
}

// publishOpts are the flags of publish.
type publishOpts struct {
	a          *app
	key        string
	partition  int // -1: routed by key or UUID
	headers    []string
	lines      bool
	uuid       string
	partitions int // create the topic with this many partitions when it is missing
}

const publishLong = `Sends test messages to a topic through a streamq Publisher with the default
configuration, as a service would (kcat -P for streamq): routed by --key through the default
partitioner, or forced onto --partition, with --header metadata, appended once (the
default idempotent append).

The payload is read from stdin: by default all of it is one message, byte for byte; with
--lines each line is a message (empty lines are skipped). On a terminal, end the payload
with Ctrl-D. Each message gets a new UUID unless --uuid gives one (one message only).

The topic must exist: --partitions N creates it with N partitions when it does not (a
typo does not create a topic of one partition). Prints where each message went: its
partition and stream id.`

const publishExample = `  echo '{"order":1}' | streamq publish orders --key customer-7 --header source=cli
  streamq publish orders --partition 3 < order.json
  streamq publish orders --lines < orders.jsonl
  streamq publish test-topic --partitions 4 --lines -o json < messages.txt`

// publishCmd is "streamq publish".
func publishCmd(a *app) *cobra.Command {
	o := &publishOpts{a: a}
	cmd := &cobra.Command{
		Use:               "publish TOPIC",
		Short:             "Publish test messages from stdin (one, or one per line) through a streamq Publisher",
		Long:              publishLong,
		Example:           publishExample,
		GroupID:           groupData,
		Args:              argsExactly("TOPIC"),
		ValidArgsFunction: a.completeArgs(argTopic),
		RunE:              a.runE(o.run),
	}
	f := cmd.Flags()
	f.StringVarP(&o.key, "key", "k", "", "partition key: messages with the same key go to the same partition, in order")
	f.IntVar(&o.partition, "partition", -1, "force the messages onto this partition (overrides --key)")
	f.StringArrayVarP(&o.headers, "header", "H", nil, "metadata key=value; repeat for more")
	f.BoolVarP(&o.lines, "lines", "l", false, "one message per line of stdin (default: all of stdin is one message)")
	f.StringVar(&o.uuid, "uuid", "", "the message's UUID (default: a new one); one message only")
	f.IntVar(&o.partitions, "partitions", 0, "create the topic with this many partitions when it does not exist")
	a.addPayloadFlags(f)
	a.addJSONFlag(cmd)
	return cmd
}

// run checks the flags, reads stdin and publishes it.
func (o *publishOpts) run(cmd *cobra.Command, args []string) error {
	topic := args[0]
	metadata, err := o.metadata()
	if err != nil {
		return err
	}
	if o.uuid != "" && o.lines {
		return usageErrorf("--uuid names one message: it does not go with --lines")
	}
	if o.partitions < 0 {
		return usageErrorf("--partitions must be positive, got %d", o.partitions)
	}
	ctx := cmd.Context()
	if err := o.checkTopic(ctx, topic); err != nil {
		return err
	}
	pub, err := o.publisher()
	if err != nil {
		return err
	}
	defer func() { _ = pub.Close() }()
	if f := o.a.stdin; f != nil && isTTY(f.Fd()) {
		fmt.Fprintln(o.a.stderr, "reading the payload from the terminal: end it with Ctrl-D")
	}
	var in io.Reader = strings.NewReader("")
	if o.a.stdin != nil {
		in = o.a.stdin
	}
	sent, err := o.send(ctx, pub, topic, metadata, in)
	if err != nil {
		return err
	}
	return o.print(topic, sent)
}

// metadata reads --key, --partition and --header into a message's metadata.
func (o *publishOpts) metadata() (map[string]string, error) {
	md := map[string]string{}
	for _, h := range o.headers {
		k, v, ok := strings.Cut(h, "=")
		if !ok || k == "" {
			return nil, usageErrorf("--header takes key=value, got %q", h)
		}
		md[k] = v
	}
	if o.key != "" {
		md[streamq.PartitionKeyMetadata] = o.key
	}
	if o.partition >= 0 {
		md[streamq.ForcePartitionMetadata] = strconv.Itoa(o.partition)
	}
	return md, nil
}

// checkTopic refuses a topic that does not exist, unless --partitions creates it.
func (o *publishOpts) checkTopic(ctx context.Context, topic string) error {
	adm, err := o.a.admin(ctx)
	if err != nil {
		return err
	}
	topics, err := adm.ListTopics(ctx)
	if err != nil || slices.Contains(topics, topic) {
		return err
	}
	if o.partitions == 0 {
		return &notFoundError{msg: fmt.Sprintf("topic %q does not exist: give --partitions N to create it with N partitions, "+
			"or create it first (streamq create-topic %s --partitions N)", topic, topic)}
	}
	return adm.CreateTopic(ctx, topic, o.partitions)
}

// publisher is a Publisher with the default configuration on the command's Redis, its key
// prefixes and payload threshold.
func (o *publishOpts) publisher() (*streamq.Publisher, error) {
	a := o.a
	return streamq.NewPublisher(streamq.PublisherConfig{
		Client:   a.conn.client,
		Keyspace: streamq.Keyspace{StreamPrefix: a.streamPrefix, ControlPrefix: a.controlPrefix},
		Payloads: streamq.PayloadConfig{Threshold: a.payloadThreshold, TTL: a.payloadRetention},
	}, watermill.NopLogger{})
}

// send publishes in as one message, or with --lines one message per line (publishBatch to a
// Publish call), and returns where each went.
func (o *publishOpts) send(ctx context.Context, pub *streamq.Publisher, topic string, md map[string]string, in io.Reader) ([]publishedView, error) {
	if !o.lines {
		payload, err := io.ReadAll(in)
		if err != nil {
			return nil, fmt.Errorf("read the payload from stdin: %w", err)
		}
		return o.publish(pub, topic, []*message.Message{o.message(payload, md)}, 0)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var sent, batch = []publishedView{}, []*message.Message{}
	for sc.Scan() {
		if len(sc.Bytes()) > 0 {
			batch = append(batch, o.message(slices.Clone(sc.Bytes()), md))
		}
		if len(batch) == publishBatch {
			done, err := o.publish(pub, topic, batch, len(sent))
			if sent = append(sent, done...); err != nil {
				return sent, err
			}
			batch = batch[:0]
		}
		if err := ctx.Err(); err != nil {
			return sent, err
		}
	}
	if err := sc.Err(); err != nil {
		return sent, fmt.Errorf("read line %d of stdin: %w", len(sent)+len(batch)+1, err)
	}
	done, err := o.publish(pub, topic, batch, len(sent))
	return append(sent, done...), err
}

// message is one message of payload with a copy of md.
func (o *publishOpts) message(payload []byte, md map[string]string) *message.Message {
	id := o.uuid
	if id == "" {
		id = watermill.NewUUID()
	}
	m := message.NewMessage(id, payload)
	for k, v := range md {
		m.Metadata.Set(k, v)
	}
	return m
}

// publish publishes msgs (one call) and returns where each went; before is how many were
// published before them, for the error.
func (o *publishOpts) publish(pub *streamq.Publisher, topic string, msgs []*message.Message, before int) ([]publishedView, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	if err := pub.Publish(topic, msgs...); err != nil {
		if errors.Is(err, streamq.ErrPartitionOutOfRange) {
			return nil, usageErrorf("--partition %d is out of range: %v", o.partition, err)
		}
		if before > 0 {
			return nil, fmt.Errorf("%w (%s published before the error)", err, plural(int64(before), "message was", "messages were"))
		}
		return nil, err
	}
	out := make([]publishedView, len(msgs))
	for i, m := range msgs {
		p, _ := streamq.PublishedPartition(m)
		id, _ := streamq.PublishedStreamID(m)
		out[i] = publishedView{UUID: m.UUID, Partition: p, ID: id}
	}
	return out, nil
}

// print says where the messages went: one line for one message, else a table and a count.
func (o *publishOpts) print(topic string, sent []publishedView) error {
	w := o.a.stdout
	if o.a.json {
		return printJSON(w, nonNil(sent))
	}
	switch len(sent) {
	case 0:
		_, err := fmt.Fprintf(w, "stdin held no line: nothing published to %q\n", topic)
		return err
	case 1:
		_, err := fmt.Fprintf(w, "published message %s to partition %d of %q as %s\n", sent[0].UUID, sent[0].Partition, topic, sent[0].ID)
		return err
	}
	t := newTable(w, "PARTITION", "ID", "UUID")
	for _, s := range sent {
		t.row(s.Partition, s.ID, s.UUID)
	}
	if err := t.flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "published %s to %q\n", plural(int64(len(sent)), "message", "messages"), topic)
	return err
}
