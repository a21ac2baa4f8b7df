package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is a redis-server child process on a free loopback port, without persistence.
type redisServer struct {
	cmd  *exec.Cmd
	dir  string
	addr string
	done chan struct{} // closed when the process has exited
}

// startRedis starts bin on a free loopback port (never 6379) with --save ” --appendonly no.
func startRedis(ctx context.Context, bin string) (*redisServer, error) {
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("redis-server not found (%v): install it (apt-get install redis-server) or pass --redis-url", err)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s, err := launchRedis(ctx, path, port, nil)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

func freePort() (int, error) {
	for i := 0; i < 10; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("find a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if port != 6379 {
			return port, nil
		}
	}
	return 0, errors.New("find a free port: only 6379 came back")
}

func launchRedis(ctx context.Context, path string, port int, extra []string) (*redisServer, error) {
	dir, err := os.MkdirTemp("", "streamq-bench-redis-")
	if err != nil {
		return nil, err
	}
	logFile := filepath.Join(dir, "redis.log")
	cmd := exec.Command(path,
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", dir,
		"--logfile", logFile,
		"--daemonize", "no",
		"--protected-mode", "yes",
	)
	cmd.Args = append(cmd.Args, extra...)
	// Own process group: a terminal Ctrl-C reaches only this program, which then stops the
	// server itself. Pdeathsig kills the server if this program dies without cleaning up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	s := &redisServer{cmd: cmd, dir: dir, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()
	c := redis.NewClient(&redis.Options{Addr: s.addr})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		err := c.Ping(pctx).Err()
		cancel()
		if err == nil {
			return s, nil
		}
		select {
		case <-s.done:
			log, _ := os.ReadFile(logFile)
			s.Stop()
			return nil, fmt.Errorf("redis-server on port %d exited at start: %s", port, strings.TrimSpace(string(log)))
		default:
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.Stop()
			return nil, fmt.Errorf("redis-server on port %d did not answer PING: %v", port, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop terminates the server (SIGTERM, then SIGKILL after 5 s) and removes its directory.
// Safe to call more than once.
func (s *redisServer) Stop() {
	if s == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.done:
	default:
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	}
	_ = os.RemoveAll(s.dir)
}

// startReplicas starts n replicas of master (--replicaof), each a redis-server child like
// master, and waits until each acknowledges a write (WAIT): after a sync the master streams
// commands to a replica only from its first REPLCONF ACK, sent once a second.
func startReplicas(ctx context.Context, bin string, master *redisServer, n int) ([]*redisServer, error) {
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("redis-server not found (%v)", err)
	}
	host, port, _ := net.SplitHostPort(master.addr)
	mc := redis.NewClient(&redis.Options{Addr: master.addr})
	defer mc.Close()
	if err := mc.ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err(); err != nil {
		return nil, fmt.Errorf("CONFIG SET repl-diskless-sync-delay 0: %w", err)
	}
	var out []*redisServer
	for len(out) < n {
		p, err := freePort()
		if err != nil {
			return out, err
		}
		r, err := launchRedis(ctx, path, p, []string{"--replicaof", host, port})
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		pipe := mc.Pipeline()
		pipe.Set(ctx, "bench:replica-sync-probe", "1", 0)
		wait := redis.NewIntCmd(ctx, "wait", n, 100)
		_ = pipe.Process(ctx, wait)
		_, err := pipe.Exec(ctx)
		if err == nil && wait.Val() >= int64(n) {
			return out, mc.Del(ctx, "bench:replica-sync-probe").Err()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return out, fmt.Errorf("%d replica(s) of %s not acknowledging within 30s (WAIT %d, %v)", n, master.addr, wait.Val(), err)
		}
	}
}

// redisInfo returns redis_version from INFO server.
func redisVersion(ctx context.Context, c redis.UniversalClient) string {
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v
		}
	}
	return "unknown"
}

// redisCluster is a Redis Cluster of redis-server children, one master per node, no replicas.
type redisCluster struct {
	nodes []*redisServer
}

func (c *redisCluster) addrs() []string {
	var out []string
	for _, n := range c.nodes {
		out = append(out, n.addr)
	}
	return out
}

func (c *redisCluster) pids() []int {
	var out []int
	for _, n := range c.nodes {
		out = append(out, n.cmd.Process.Pid)
	}
	return out
}

// Stop stops every node and removes its directory. Safe to call more than once.
func (c *redisCluster) Stop() {
	if c == nil {
		return
	}
	for _, n := range c.nodes {
		n.Stop()
	}
}

// startCluster starts masters redis-server nodes on free loopback ports with cluster mode on
// (each in its own temp dir), joins them with redis-cli --cluster create (no replicas) and
// waits until CLUSTER INFO says cluster_state:ok on every node.
func startCluster(ctx context.Context, bin string, masters int) (*redisCluster, error) {
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("redis-server not found (%v): install it (apt-get install redis-server)", err)
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		if alt := filepath.Join(filepath.Dir(path), "redis-cli"); fileExists(alt) {
			cli, err = alt, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("redis-cli not found (%v): needed for --cluster", err)
	}
	extra := []string{
		"--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", "2000",
	}
	c := &redisCluster{}
	used := map[int]bool{}
	for len(c.nodes) < masters {
		var s *redisServer
		var lastErr error
		for attempt := 0; attempt < 3 && s == nil; attempt++ {
			port, err := freePort()
			if err != nil {
				c.Stop()
				return nil, err
			}
			// The cluster bus listens on port+10000: both must be usable and distinct.
			if used[port] || port+10000 > 65535 || used[port+10000] {
				continue
			}
			s, lastErr = launchRedis(ctx, path, port, extra)
			if ctx.Err() != nil {
				break
			}
		}
		if s == nil {
			c.Stop()
			if lastErr == nil {
				lastErr = errors.New("no usable port pair (port, port+10000)")
			}
			return nil, lastErr
		}
		_, portStr, _ := net.SplitHostPort(s.addr)
		port, _ := strconv.Atoi(portStr)
		used[port], used[port+10000] = true, true
		c.nodes = append(c.nodes, s)
	}
	args := append([]string{"--cluster", "create"}, c.addrs()...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	out, err := exec.CommandContext(cctx, cli, args...).CombinedOutput()
	cancel()
	if err != nil {
		c.Stop()
		return nil, fmt.Errorf("redis-cli --cluster create: %v: %s", err, strings.TrimSpace(string(out)))
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range c.nodes {
		nc := redis.NewClient(&redis.Options{Addr: n.addr})
		for {
			pctx, cancel := context.WithTimeout(ctx, time.Second)
			info, err := nc.ClusterInfo(pctx).Result()
			cancel()
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				_ = nc.Close()
				c.Stop()
				if err == nil {
					err = errors.New("cluster_state is not ok")
				}
				return nil, fmt.Errorf("cluster node %s not ready within 30s: %v", n.addr, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		_ = nc.Close()
	}
	return c, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
