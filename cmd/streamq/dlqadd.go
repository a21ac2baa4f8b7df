package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/admin"
)

// dlqAddOpts are the flags of dlq add.
type dlqAddOpts struct {
	a           *app
	reason      string
	group       string
	uuid        string
	payload     string
	payloadFile string
	metadata    []string
	originalID  string
}

const dlqAddLong = `Writes a dead letter to the DLQ of the topic's partition, for a message rejected outside a
handler (by a tool or an operator). It is a dead letter like those the consumers write:
"dlq list" shows it, a subscriber of the DLQ topic (streamq.DLQTopic) consumes it, and
"dlq replay" appends it to its partition. Nothing is acked in the partition. Prints the new
dead letter's id.`

const dlqAddExample = `  streamq dlq add orders 3 --reason "rejected by the reconciler" --payload '{"id":7}' \
      --metadata customer=c-7 --group billing --original-id 1718000000000-0
  streamq dlq add orders 0 --reason "bad export" --payload-file order.json
  cat order.json | streamq dlq add orders 0 --reason "bad export" --payload-file -`

// dlqAddCmd is "streamq dlq add".
func dlqAddCmd(a *app) *cobra.Command {
	o := &dlqAddOpts{a: a}
	cmd := &cobra.Command{
		Use:               "add TOPIC PARTITION --reason REASON",
		Short:             "Write a dead letter to a partition's DLQ",
		Long:              dlqAddLong,
		Example:           dlqAddExample,
		Args:              argsExactly("TOPIC", "PARTITION"),
		ValidArgsFunction: a.completeArgs(argTopic),
		RunE:              a.withAdmin(o.run),
	}
	f := cmd.Flags()
	f.StringVar(&o.reason, "reason", "", "why the message was rejected (required)")
	f.StringVar(&o.group, "group", "", "the consumer group that rejected it (default none)")
	f.StringVar(&o.uuid, "uuid", "", "the message's UUID (default a new one)")
	f.StringVar(&o.payload, "payload", "", "the message's payload")
	f.StringVar(&o.payloadFile, "payload-file", "", `read the payload from this file ("-": stdin)`)
	f.StringArrayVar(&o.metadata, "metadata", nil, "a metadata entry KEY=VALUE (repeatable)")
	f.StringVar(&o.originalID, "original-id", "", "the message's stream id in the partition, when it has one")
	_ = cmd.MarkFlagRequired("reason")
	a.addJSONFlag(cmd)
	return cmd
}

// run writes the dead letter and prints its id (--json: the dead letter as "dlq show" does).
func (o *dlqAddOpts) run(ctx context.Context, adm *admin.Admin, _ *cobra.Command, args []string) error {
	p, err := parsePartition(args[1])
	if err != nil {
		return err
	}
	md, err := parseMetadata(o.metadata)
	if err != nil {
		return err
	}
	if o.payload != "" && o.payloadFile != "" {
		return usageErrorf("--payload and --payload-file both give the payload: give the text with --payload, " +
			"or a file (\"-\" for stdin) with --payload-file")
	}
	payload, err := o.readPayload()
	if err != nil {
		return err
	}
	d, err := adm.AddDeadLetter(ctx, admin.NewDeadLetter{
		Topic: args[0], Partition: p, UUID: o.uuid, Payload: payload, Metadata: md,
		Reason: o.reason, Group: o.group, OriginalMessageID: o.originalID,
	})
	if err != nil {
		return err
	}
	if o.a.json {
		return printJSON(o.a.stdout, newDeadLetterView(d))
	}
	fmt.Fprintf(o.a.stdout, "added dead letter %s to partition %d of %q\n", d.ID, d.Partition, d.Topic)
	return nil
}

// readPayload is --payload, or the contents of --payload-file.
func (o *dlqAddOpts) readPayload() ([]byte, error) {
	switch o.payloadFile {
	case "":
		return []byte(o.payload), nil
	case "-":
		b, err := io.ReadAll(o.a.stdin)
		if err != nil {
			return nil, fmt.Errorf("read the payload from stdin: %w", err)
		}
		return b, nil
	default:
		b, err := os.ReadFile(o.payloadFile)
		if err != nil {
			return nil, usageErrorf("--payload-file: %v", err)
		}
		return b, nil
	}
}

// parseMetadata reads --metadata KEY=VALUE entries; a later entry of a key wins.
func parseMetadata(entries []string) (map[string]string, error) {
	md := map[string]string{}
	for _, kv := range entries {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usageErrorf("--metadata must be KEY=VALUE, got %q", kv)
		}
		md[k] = v
	}
	return md, nil
}
