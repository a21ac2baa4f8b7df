package server

import (
	"errors"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// infoServer and infoMemory are INFO replies as Redis sends them (CRLF, section headers),
// cut down to a few fields around the ones that matter.
func infoServer(version string) string {
	return "# Server\r\nredis_version:" + version + "\r\nredis_git_sha1:00000000\r\nredis_mode:standalone\r\nos:Linux 6.1.0 x86_64\r\n"
}

func infoMemory(policy string) string {
	return "# Memory\r\nused_memory:1048576\r\nmaxmemory:0\r\nmaxmemory_human:0B\r\nmaxmemory_policy:" + policy + "\r\nallocator_frag_ratio:1.00\r\n"
}

func TestParseInfoAndJudge(t *testing.T) {
	tests := []struct {
		name        string
		replies     []string
		want        Facts
		unsupported bool
		evicting    bool
		unknown     []string
	}{
		{name: "redis 7.0 noeviction", replies: []string{infoServer("7.0.15"), infoMemory("noeviction")},
			want: Facts{Version: "7.0.15", MaxmemoryPolicy: "noeviction"}},
		{name: "redis 7.0.0 exactly", replies: []string{infoServer("7.0.0"), infoMemory("noeviction")},
			want: Facts{Version: "7.0.0", MaxmemoryPolicy: "noeviction"}},
		{name: "redis 8 unstable", replies: []string{infoServer("255.255.255"), infoMemory("noeviction")},
			want: Facts{Version: "255.255.255", MaxmemoryPolicy: "noeviction"}},
		{name: "redis 6.2 is too old", replies: []string{infoServer("6.2.14"), infoMemory("noeviction")},
			want: Facts{Version: "6.2.14", MaxmemoryPolicy: "noeviction"}, unsupported: true},
		{name: "redis 5 is too old", replies: []string{infoServer("5.0.7"), infoMemory("noeviction")},
			want: Facts{Version: "5.0.7", MaxmemoryPolicy: "noeviction"}, unsupported: true},
		{name: "release candidate", replies: []string{infoServer("7.0.0-rc1"), infoMemory("noeviction")},
			want: Facts{Version: "7.0.0-rc1", MaxmemoryPolicy: "noeviction"}},
		{name: "allkeys-lru evicts", replies: []string{infoServer("7.2.4"), infoMemory("allkeys-lru")},
			want: Facts{Version: "7.2.4", MaxmemoryPolicy: "allkeys-lru"}, evicting: true},
		{name: "volatile-ttl evicts leases", replies: []string{infoServer("7.2.4"), infoMemory("volatile-ttl")},
			want: Facts{Version: "7.2.4", MaxmemoryPolicy: "volatile-ttl"}, evicting: true},
		{name: "old and evicting", replies: []string{infoMemory("allkeys-random"), infoServer("6.0.9")},
			want: Facts{Version: "6.0.9", MaxmemoryPolicy: "allkeys-random"}, unsupported: true, evicting: true},
		{name: "LF line ends", replies: []string{"# Server\nredis_version:7.4.1\n", "# Memory\nmaxmemory_policy:noeviction\n"},
			want: Facts{Version: "7.4.1", MaxmemoryPolicy: "noeviction"}},
		{name: "memory section refused", replies: []string{infoServer("7.0.15"), ""},
			want: Facts{Version: "7.0.15"}, unknown: []string{"maxmemory-policy"}},
		{name: "no version (emulation)", replies: []string{"# Clients\r\nconnected_clients:1\r\n"},
			unknown: []string{"version", "maxmemory-policy"}},
		{name: "version not a number", replies: []string{infoServer("unknown"), infoMemory("noeviction")},
			want: Facts{Version: "unknown", MaxmemoryPolicy: "noeviction"}, unknown: []string{"version"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := ParseInfo(tt.replies...)
			assert.Equal(t, tt.want, Facts{Version: f.Version, MaxmemoryPolicy: f.MaxmemoryPolicy})
			got := Judge("10.0.0.1:6379", f)
			assert.Equal(t, tt.evicting, got.Evicting, "evicting")
			assert.Equal(t, tt.unknown, got.Unknown, "unknown")
			if !tt.unsupported {
				assert.NoError(t, got.Unsupported)
				return
			}
			require.ErrorIs(t, got.Unsupported, ErrUnsupported)
			// The message names the version found, the server and the version needed.
			assert.Contains(t, got.Unsupported.Error(), "Redis "+f.Version+" at 10.0.0.1:6379")
			assert.Contains(t, got.Unsupported.Error(), "needs Redis "+MinVersion.String()+" or later")
		})
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in   string
		want Version
		err  bool
	}{
		{in: "7.0.15", want: Version{7, 0, 15}},
		{in: "6.2", want: Version{6, 2, 0}},
		{in: "7", want: Version{7, 0, 0}},
		{in: "7.2.0-rc1", want: Version{7, 2, 0}},
		{in: " 7.4.1 ", want: Version{7, 4, 1}},
		{in: "", err: true},
		{in: "v7", err: true},
		{in: "7.x.1", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseVersion(tt.in)
			if tt.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	assert.True(t, Version{6, 2, 14}.Less(MinVersion))
	assert.False(t, MinVersion.Less(MinVersion))
	assert.False(t, Version{7, 0, 1}.Less(MinVersion))
	assert.True(t, Version{7, 0, 9}.Less(Version{7, 1, 0}))
}

func TestRefused(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"NOPERM", replyErr("NOPERM User u has no permissions to run the 'info' command"), true},
		{"unknown section", replyErr("section (server) is not supported"), true},
		{"unknown command", replyErr("ERR unknown command 'info'"), true},
		{"LOADING", replyErr("LOADING Redis is loading the dataset in memory"), false},
		{"CLUSTERDOWN", replyErr("CLUSTERDOWN The cluster is down"), false},
		{"connection refused", errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), false},
		{"closed client", redis.ErrClosed, false},
		{"wrapped NOPERM", fmt.Errorf("info: %w", replyErr("NOPERM no")), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Refused(tt.err))
		})
	}
}

func TestIsNil(t *testing.T) {
	var c *redis.Client
	var cc *redis.ClusterClient
	assert.True(t, IsNil(nil))
	assert.True(t, IsNil(c))
	assert.True(t, IsNil(cc))
	live := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer live.Close()
	assert.False(t, IsNil(live))
}

// reply is an error reply of the server, as go-redis types them (redis.Error).
type reply string

func (r reply) Error() string { return string(r) }
func (reply) RedisError()     {}

func replyErr(msg string) error { return reply(msg) }

func TestParseInfoMemory(t *testing.T) {
	f := ParseInfo(infoServer("7.0.15"), infoMemory("noeviction"))
	assert.Equal(t, int64(1048576), f.UsedMemory)
	assert.True(t, f.HasMaxMemory)
	assert.True(t, Judge("", f).NoMemoryLimit, "maxmemory 0 is no limit")

	f = ParseInfo("# Memory\r\nused_memory:41943040\r\nmaxmemory:41943040\r\nmaxmemory_policy:noeviction\r\n")
	assert.Equal(t, int64(41943040), f.MaxMemory)
	assert.False(t, Judge("", f).NoMemoryLimit)
	m := Memory{Used: f.UsedMemory, Max: f.MaxMemory}
	assert.True(t, m.Full())
	assert.True(t, m.Above(0.8))
	assert.False(t, Memory{Used: 10, Max: 100}.Above(0.8))
	assert.False(t, Memory{Used: 10, Max: 0}.Full(), "no limit is never full")
	assert.False(t, ParseInfo("# Clients\r\n").HasMaxMemory, "not reported")
	assert.False(t, Judge("", ParseInfo("# Clients\r\n")).NoMemoryLimit, "not reported is not no limit")
}
