package streamq

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestValidateReportsEveryFieldInOrder: one config with a bad field in many groups gets one
// error naming every one by its path, in the order of the fields, the same at every call.
func TestValidateReportsEveryFieldInOrder(t *testing.T) {
	t.Parallel()
	cfg := SubscriberConfig{
		Client:     unusedClient(t),
		Membership: MembershipConfig{LeaseTTL: time.Second, RenewInterval: 2 * time.Second},
		Topics: map[string]ReadConfig{
			"zeta":  {BatchCount: -1},
			"alpha": {PartitionModulo: 2, PartitionRemainder: 5},
		},
		Reclaim:   ReclaimConfig{BatchSize: -1},
		Delivery:  DeliveryConfig{OrderByKey: true},
		Acks:      AckConfig{DeletePolicy: "sometimes"},
		Retry:     RetryConfig{MaxRetries: 5, Policy: ExponentialBackoff{Attempts: 10}},
		Retention: RetentionConfig{MaxAge: -time.Second},
		Payloads:  PayloadConfig{Threshold: -2},
	}
	_, err := NewSubscriber(cfg, nil)
	require.ErrorIs(t, err, ErrInvalidConfig)
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
	lines := strings.Split(strings.TrimPrefix(err.Error(), ErrInvalidConfig.Error()+": "), "\n")
	require.Len(t, lines, len(want), "one line per bad field:\n%s", err)
	for i, w := range want {
		assert.Contains(t, lines[i], w, "line %d", i)
	}
	for range 20 { // Topics is a map: its order must not leak into the message
		_, again := NewSubscriber(cfg, nil)
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
		retry RetryConfig
		fails string
	}{
		{name: "the same cap twice", retry: RetryConfig{MaxRetries: 4, Policy: ExponentialBackoff{Attempts: 4}}},
		{name: "for ever twice", retry: RetryConfig{MaxRetries: RetryForever, Policy: ExponentialBackoff{Attempts: RetryForever}}},
		{name: "two counts", retry: RetryConfig{MaxRetries: 3, Policy: ExponentialBackoff{Attempts: 10}}, fails: "Retry.MaxRetries 3 and Retry.Policy's MaxAttempts 10"},
		{name: "NoRetries and a count", retry: RetryConfig{MaxRetries: NoRetries, Policy: ExponentialBackoff{Attempts: 2}}, fails: "Retry.MaxRetries -2 and Retry.Policy's MaxAttempts 2"},
		{name: "for ever and a count", retry: RetryConfig{MaxRetries: 2, Policy: ExponentialBackoff{Attempts: RetryForever}}, fails: "two different retry caps"},
		{name: "a policy cap out of range", retry: RetryConfig{Policy: ExponentialBackoff{Attempts: -3}}, fails: "Retry.Policy's MaxAttempts must be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub, err := NewSubscriber(SubscriberConfig{Client: client, Retry: tt.retry}, nil)
			if tt.fails == "" {
				require.NoError(t, err)
				require.NoError(t, sub.Close())
				return
			}
			require.ErrorIs(t, err, ErrInvalidConfig)
			assert.Contains(t, err.Error(), tt.fails)
		})
	}
}
