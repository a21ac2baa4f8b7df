package consume

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type testKey string

func isDone(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
		return false
	}
}

// A delivered message's context ends when the delivery is settled, whether or not anything
// asked for Done before, and reports it through Err, Done, Cause and AfterFunc alike.
func TestDeliveryContextEndsWhenSettled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		doneBefore bool
	}{{"Done asked before settling", true}, {"nothing asked before settling", false}} {
		t.Run(tc.name, func(t *testing.T) {
			parent := context.WithValue(context.Background(), testKey("k"), "v")
			dc := &deliveryCtx{parent: parent, d: Delivery{StreamID: "1-0"}}
			fired := make(chan struct{})
			if tc.doneBefore {
				require.False(t, isDone(dc))
				context.AfterFunc(dc, func() { close(fired) })
			}
			require.NoError(t, dc.Err())
			require.NoError(t, context.Cause(dc))

			dc.settle()
			assert.ErrorIs(t, dc.Err(), context.Canceled)
			assert.True(t, isDone(dc))
			assert.ErrorIs(t, context.Cause(dc), context.Canceled)
			if tc.doneBefore {
				<-fired
			}
			d, ok := DeliveryOf(dc)
			assert.True(t, ok)
			assert.Equal(t, "1-0", d.StreamID)
			assert.Equal(t, "v", dc.Value(testKey("k")), "the parent's values stay visible")
			settledChild, cancel := context.WithCancel(dc)
			defer cancel()
			assert.True(t, isDone(settledChild), "a child of a settled delivery is done")
		})
	}
}

// The context also ends with its parent (the subscription closed, the partition was lost),
// with the parent's cause, and a child made before that ends with it.
func TestDeliveryContextEndsWithItsParent(t *testing.T) {
	t.Parallel()
	cause := errors.New("partition lost")
	parent, cancel := context.WithCancelCause(context.Background())
	dc := &deliveryCtx{parent: parent}
	child, stop := context.WithCancel(dc)
	defer stop()
	require.False(t, isDone(child))

	cancel(cause)
	assert.True(t, isDone(dc))
	assert.True(t, isDone(child))
	assert.ErrorIs(t, dc.Err(), context.Canceled)
	assert.ErrorIs(t, context.Cause(dc), cause)
	dc.settle() // settling afterwards changes nothing
	assert.ErrorIs(t, context.Cause(dc), cause)
}

// Settling before anything asked for Done costs no cancelable child.
func TestDeliveryContextMakesNoChildUntilAsked(t *testing.T) {
	t.Parallel()
	dc := &deliveryCtx{parent: context.Background()}
	_, _ = DeliveryOf(dc)
	dc.settle()
	assert.Nil(t, dc.child)
	assert.ErrorIs(t, dc.Err(), context.Canceled)
	assert.Nil(t, dc.child)
}
