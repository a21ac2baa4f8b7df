package partition

import (
	"context"
	"fmt"
)

// Topics returns the registered topics.
func (r *Registry) Topics(ctx context.Context) ([]string, error) {
	topics, err := r.rdb.SMembers(ctx, r.space.Registry()).Result()
	if err != nil {
		return nil, fmt.Errorf("list topics: %w", err)
	}
	return topics, nil
}

// Registered reports whether topic is in the registry.
func (r *Registry) Registered(ctx context.Context, topic string) (bool, error) {
	ok, err := r.rdb.SIsMember(ctx, r.space.Registry(), topic).Result()
	if err != nil {
		return false, fmt.Errorf("read registry: %w", err)
	}
	return ok, nil
}

// Unregister removes topic from the registry.
func (r *Registry) Unregister(ctx context.Context, topic string) error {
	if err := r.rdb.SRem(ctx, r.space.Registry(), topic).Err(); err != nil {
		return fmt.Errorf("remove %q from the registry: %w", topic, err)
	}
	return nil
}
