package main

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// Shell completion: cobra's built-in "completion" command writes the bash, zsh, fish and
// PowerShell scripts; the scripts call back into "streamq __complete", where the functions
// below complete topic and consumer-group arguments from Redis (with the global flags given
// on the command line so far). Nothing is completed when Redis cannot be reached.

// argKind is what a positional argument names.
type argKind int

const (
	argNone argKind = iota
	argTopic
	argGroup // a consumer group of the topic given as the first argument
)

// completionTimeout bounds the Redis round trips of one completion.
const completionTimeout = 2 * time.Second

// completeArgs completes the positional arguments of a command taking kinds in order.
func (a *app) completeArgs(kinds ...argKind) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) >= len(kinds) {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
		defer cancel()
		var names []string
		switch kinds[len(args)] {
		case argTopic:
			names = a.topicNames(ctx)
		case argGroup:
			names = a.groupNames(ctx, args[0])
		}
		var out []cobra.Completion
		for _, n := range names {
			if strings.HasPrefix(n, toComplete) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

func (a *app) topicNames(ctx context.Context) []string {
	adm, err := a.admin(ctx)
	if err != nil {
		return nil
	}
	topics, _ := adm.ListTopics(ctx)
	return topics
}

func (a *app) groupNames(ctx context.Context, topic string) []string {
	adm, err := a.admin(ctx)
	if err != nil {
		return nil
	}
	groups, _ := adm.ConsumerGroups(ctx, topic)
	out := make([]string, len(groups))
	for i, g := range groups {
		out[i] = g.Name
	}
	return out
}
