package streamq_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
)

// TestValidateReportsEveryFieldInOrder: one config with a bad field in many groups gets one
// error naming every one by its path, in the order of the fields, the same at every call.
func TestValidateReportsEveryFieldInOrder(t *testing.T) {
	t.Parallel()
	cfg := streamq.SubscriberConfig{
		Client:     unusedClient(t),
		Membership: streamq.MembershipConfig{LeaseTTL: time.Second, RenewInterval: 2 * time.Second},
		Topics: map[string]streamq.ReadConfig{
			"zeta":  {BatchCount: -1},
			"alpha": {PartitionModulo: 2, PartitionRemainder: 5},
		},
		Reclaim:   streamq.ReclaimConfig{BatchSize: -1},
		Delivery:  streamq.DeliveryConfig{OrderByKey: true},
		Acks:      streamq.AckConfig{DeletePolicy: "sometimes"},
		Retry:     streamq.RetryConfig{MaxRetries: 5, Policy: streamq.ExponentialBackoff{Attempts: 10}},
		Retention: streamq.RetentionConfig{MaxAge: -time.Second},
		Payloads:  streamq.PayloadConfig{Threshold: -2},
	}
	_, err := streamq.NewSubscriber(cfg, nil)
	require.ErrorIs(t, err, streamq.ErrInvalidConfig)
	want := []string{
		"Membership.LeaseTTL 1s must exceed Membership.RenewInterval 2s",
		`Topics["alpha"].PartitionRemainder 5 must be below PartitionModulo 2`,
		`Topics["zeta"].BatchCount`,
		"Reclaim.BatchSize must be positive",
		"Delivery.OrderByKey needs Delivery.MaxInFlightPerPartition above 1",
		`Acks.DeletePolicy must be`,
		"Retry.MaxRetries 5 and Retry.Policy's MaxAttempts 10 state two different retry caps",
		"Retention.MaxAge",
		"Payloads.Threshold",
	}
	lines := strings.Split(strings.TrimPrefix(err.Error(), streamq.ErrInvalidConfig.Error()+": "), "\n")
	require.Len(t, lines, len(want), "one line per bad field:\n%s", err)
	for i, w := range want {
		assert.Contains(t, lines[i], w, "line %d", i)
	}
	for range 20 { // Topics is a map: its order must not leak into the message
		_, again := streamq.NewSubscriber(cfg, nil)
		require.Equal(t, err.Error(), again.Error())
	}
}

// TestRetryCapsInOnePlace: a cap stated in MaxRetries and the policy is accepted when the two
// agree and rejected, naming both, when they differ; NoRetries and RetryForever count as caps.
func TestRetryCapsInOnePlace(t *testing.T) {
	t.Parallel()
	client := unusedClient(t)
	tests := []struct {
		name  string
		retry streamq.RetryConfig
		fails string
	}{
		{name: "the same cap twice", retry: streamq.RetryConfig{MaxRetries: 4, Policy: streamq.ExponentialBackoff{Attempts: 4}}},
		{name: "for ever twice", retry: streamq.RetryConfig{MaxRetries: streamq.RetryForever, Policy: streamq.ExponentialBackoff{Attempts: streamq.RetryForever}}},
		{name: "two counts", retry: streamq.RetryConfig{MaxRetries: 3, Policy: streamq.ExponentialBackoff{Attempts: 10}}, fails: "Retry.MaxRetries 3 and Retry.Policy's MaxAttempts 10"},
		{name: "NoRetries and a count", retry: streamq.RetryConfig{MaxRetries: streamq.NoRetries, Policy: streamq.ExponentialBackoff{Attempts: 2}}, fails: "Retry.MaxRetries -2 and Retry.Policy's MaxAttempts 2"},
		{name: "for ever and a count", retry: streamq.RetryConfig{MaxRetries: 2, Policy: streamq.ExponentialBackoff{Attempts: streamq.RetryForever}}, fails: "two different retry caps"},
		{name: "a policy cap out of range", retry: streamq.RetryConfig{Policy: streamq.ExponentialBackoff{Attempts: -3}}, fails: "Retry.Policy's MaxAttempts must be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{Client: client, Retry: tt.retry}, nil)
			if tt.fails == "" {
				require.NoError(t, err)
				require.NoError(t, sub.Close())
				return
			}
			require.ErrorIs(t, err, streamq.ErrInvalidConfig)
			assert.Contains(t, err.Error(), tt.fails)
		})
	}
}
