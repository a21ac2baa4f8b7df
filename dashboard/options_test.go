package dashboard_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/dashboard"
)

func TestNewRejectsBadOptions(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	t.Cleanup(func() { _ = client.Close() })
	tests := []struct {
		name string
		opts dashboard.Options
	}{
		{"token and basic auth", dashboard.Options{Token: "t", BasicAuthUser: "u", BasicAuthPassword: "p"}},
		{"basic user without password", dashboard.Options{BasicAuthUser: "u"}},
		{"basic password without user", dashboard.Options{BasicAuthPassword: "p"}},
		{"colon in user", dashboard.Options{BasicAuthUser: "a:b", BasicAuthPassword: "p"}},
		{"base path without slashes", dashboard.Options{BasePath: "streamq"}},
		{"base path without trailing slash", dashboard.Options{BasePath: "/streamq"}},
		{"negative refresh", dashboard.Options{RefreshInterval: -time.Second}},
		{"window shorter than interval", dashboard.Options{SampleInterval: time.Minute, SampleWindow: time.Second}},
		{"history interval below -1", dashboard.Options{HistoryInterval: -time.Second}},
		{"retention shorter than the window", dashboard.Options{SampleWindow: time.Hour, HistoryRetention: time.Minute}},
		{"negative preview", dashboard.Options{PreviewBytes: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := dashboard.New(client, tt.opts)
			require.ErrorIs(t, err, dashboard.ErrInvalidOptions)
		})
	}
	_, err := dashboard.New(nil, dashboard.Options{})
	require.ErrorIs(t, err, dashboard.ErrInvalidOptions)

	h, err := dashboard.New(client, dashboard.Options{BasicAuthUser: "u", BasicAuthPassword: "p", BasePath: "/ops/"})
	require.NoError(t, err)
	require.NoError(t, h.Close())
	require.NoError(t, h.Close(), "a second Close returns nil")
}
