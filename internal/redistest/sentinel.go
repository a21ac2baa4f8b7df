package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// SentinelMasterName is the name the sentinels of StartSentinel monitor the master under
	// (FailoverOptions.MasterName).
	SentinelMasterName = "streamq"
	// SentinelDownAfter is the sentinels' down-after-milliseconds: a master that does not
	// answer this long is down for a sentinel, and for the quorum soon after; then the replica
	// is promoted.
	SentinelDownAfter = 2 * time.Second
	// SentinelFailoverTimeout is the sentinels' failover-timeout: a failover that has not
	// promoted the replica within it is abandoned and retried after twice this time.
	SentinelFailoverTimeout = 5 * time.Second
	// sentinels is how many sentinels watch the master; sentinelQuorum of them must agree it
	// is down, and a majority elects the one that fails it over.
	sentinels, sentinelQuorum = 3, 2
	// sentinelReadyTimeout bounds the wait until every sentinel knows the master, its replica
	// and the other sentinels (they meet through hello messages, every 2 s).
	sentinelReadyTimeout = 30 * time.Second
)

// Sentinel is a Redis Sentinel deployment owned by one test: a master, one replica of it
// (replicaof) and three sentinels (redis-server CONF --sentinel) monitoring the master as
// SentinelMasterName with quorum 2, down-after-milliseconds SentinelDownAfter and
// failover-timeout SentinelFailoverTimeout. Every process runs daemonized on a free 127.0.0.1
// port in its own directory under t.TempDir(), with a watchdog like every server of this
// package; the data nodes have AOF on. t.Cleanup kills them all.
type Sentinel struct {
	t         testing.TB
	nodes     []*Server // data nodes as created: the first master, then its replica
	sentinels []*Server
}

// StartSentinel starts the master and its replica, waits until the replica is in sync,
// starts the sentinels and waits (bounded) until each of them knows the master, the replica
// and the two other sentinels. Missing redis-server skips the test, or fails it when
// RequireRedis() is true. Under -short it skips the test: Sentinel legs run in make test.
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	SkipShort(t, "Redis Sentinel")
	bin := lookupBinary(t, "redis-server")
	start := time.Now()
	root := t.TempDir()
	s := &Sentinel{t: t}
	t.Cleanup(s.cleanup) // after TempDir: runs before the directory is removed
	ports, err := freePorts(2 + sentinels)
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	if err := s.startData(bin, root, ports[0], ports[1]); err != nil {
		t.Fatalf("redistest: start sentinel's master and replica: %v", err)
	}
	synced := time.Now()
	if err := s.startSentinels(bin, root, ports[0], ports[2:]); err != nil {
		t.Fatalf("redistest: start sentinels: %v", err)
	}
	t.Logf("redistest: master, replica and %d sentinels ready in %s (replica in sync %s, sentinels %s)",
		sentinels, time.Since(start).Round(time.Millisecond), synced.Sub(start).Round(time.Millisecond),
		time.Since(synced).Round(time.Millisecond))
	return s
}

// startData starts the master and its replica and waits until the replica is in sync.
func (s *Sentinel) startData(bin, root string, masterPort, replicaPort int) error {
	quick := []string{
		"repl-diskless-sync-delay 0", // the replica syncs at once, not after 5 s
		"repl-ping-replica-period 1",
	}
	replica := append([]string{"replicaof 127.0.0.1 " + strconv.Itoa(masterPort)}, quick...)
	master, err := s.newNode(bin, filepath.Join(root, "master"), masterPort, quick, false)
	if err != nil {
		return err
	}
	s.nodes = append(s.nodes, master)
	rep, err := s.newNode(bin, filepath.Join(root, "replica"), replicaPort, replica, false)
	if err != nil {
		return err
	}
	s.nodes = append(s.nodes, rep)
	if err := launchAll(s.nodes); err != nil { // the replica retries until the master is up
		return err
	}
	return s.waitInSync(s.nodes[1], s.nodes[0].Addr(), readyTimeout)
}

// startSentinels starts a sentinel on each port, monitoring the master on masterPort, and
// waits until they know each other.
func (s *Sentinel) startSentinels(bin, root string, masterPort int, ports []int) error {
	name := SentinelMasterName
	conf := []string{
		"sentinel monitor " + name + " 127.0.0.1 " + strconv.Itoa(masterPort) + " " + strconv.Itoa(sentinelQuorum),
		"sentinel down-after-milliseconds " + name + " " + strconv.FormatInt(SentinelDownAfter.Milliseconds(), 10),
		"sentinel failover-timeout " + name + " " + strconv.FormatInt(SentinelFailoverTimeout.Milliseconds(), 10),
		"sentinel parallel-syncs " + name + " 1",
	}
	for i, port := range ports {
		srv, err := s.newNode(bin, filepath.Join(root, "sentinel"+strconv.Itoa(i)), port, conf, true)
		if err != nil {
			return err
		}
		s.sentinels = append(s.sentinels, srv)
	}
	if err := launchAll(s.sentinels); err != nil {
		return err
	}
	last := errors.New("not checked")
	err := poll(sentinelReadyTimeout, func() bool {
		last = s.checkSentinels()
		return last == nil
	})
	if err != nil {
		return fmt.Errorf("sentinels not ready: %w (last: %w)%s", err, last, s.sentinels[0].logTail())
	}
	return nil
}

// newNode prepares a data node or a sentinel in dir.
func (s *Sentinel) newNode(bin, dir string, port int, extra []string, sentinel bool) (*Server, error) {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create node directory: %w", err)
	}
	srv := serverIn(s.t, bin, port, dir, extra)
	srv.sentinel = sentinel
	if err := srv.prepare(); err != nil {
		return nil, err
	}
	return srv, nil
}

// checkSentinels reports a sentinel that does not yet see the master up with one replica
// in sync and the two other sentinels.
func (s *Sentinel) checkSentinels() error {
	master := s.nodes[0].Addr()
	for _, sn := range s.sentinels {
		var m map[string]string
		var replicas []map[string]string
		err := sn.sentinelCommand(func(ctx context.Context, c *redis.SentinelClient) (err error) {
			if m, err = c.Master(ctx, SentinelMasterName).Result(); err != nil {
				return err
			}
			replicas, err = c.Replicas(ctx, SentinelMasterName).Result()
			return err
		})
		if err != nil {
			return err
		}
		addr := net.JoinHostPort(m["ip"], m["port"])
		if addr != master || m["flags"] != "master" || m["num-other-sentinels"] != strconv.Itoa(sentinels-1) {
			return fmt.Errorf("%s: master %s flags %q, %s other sentinels", sn.Addr(), addr, m["flags"], m["num-other-sentinels"])
		}
		if len(replicas) != 1 || replicas[0]["flags"] != "slave" || replicas[0]["master-link-status"] != "ok" {
			return fmt.Errorf("%s: replicas %v", sn.Addr(), replicas)
		}
	}
	return nil
}

// MasterName returns the name the sentinels know the master by: SentinelMasterName.
func (s *Sentinel) MasterName() string { return SentinelMasterName }

// SentinelAddrs returns the address ("127.0.0.1:PORT") of every sentinel.
func (s *Sentinel) SentinelAddrs() []string { return addrs(s.sentinels) }

// Addrs returns the address of the master and of the replica, as created: roles change
// after a failover (see Master).
func (s *Sentinel) Addrs() []string { return addrs(s.nodes) }

func addrs(servers []*Server) []string {
	out := make([]string, len(servers))
	for i, srv := range servers {
		out[i] = srv.Addr()
	}
	return out
}

// Node returns the data node (master or replica) listening on addr, or nil.
func (s *Sentinel) Node(addr string) *Server {
	for _, srv := range s.nodes {
		if srv.Addr() == addr {
			return srv
		}
	}
	return nil
}

// FailoverClient returns a new redis.NewFailoverClient over the sentinels, which writes to
// whichever node they name master; it is closed in t.Cleanup.
func (s *Sentinel) FailoverClient(t testing.TB) *redis.Client {
	t.Helper()
	return s.FailoverClientWith(t, nil)
}

// FailoverClientWith is FailoverClient with options changed by tweak (nil: none).
func (s *Sentinel) FailoverClientWith(t testing.TB, tweak func(*redis.FailoverOptions)) *redis.Client {
	t.Helper()
	opts := &redis.FailoverOptions{
		MasterName:      SentinelMasterName,
		SentinelAddrs:   s.SentinelAddrs(),
		DisableIdentity: true,
	}
	if tweak != nil {
		tweak(opts)
	}
	client := redis.NewFailoverClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// UniversalClient returns a new client made by redis.NewUniversalClient with MasterName and
// the sentinels' addresses (a failover client, as an application configured for Sentinel
// gets it); it is closed in t.Cleanup.
func (s *Sentinel) UniversalClient(t testing.TB) redis.UniversalClient {
	t.Helper()
	client := redis.NewUniversalClient(&redis.UniversalOptions{
		MasterName:      SentinelMasterName,
		Addrs:           s.SentinelAddrs(),
		DisableIdentity: true,
	})
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// Master returns the address of the master as a majority of the sentinels name it
// (SENTINEL GET-MASTER-ADDR-BY-NAME).
func (s *Sentinel) Master() (string, error) {
	votes := map[string]int{}
	var errs []error
	for _, sn := range s.sentinels {
		addr, err := sn.masterAddrByName()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		votes[addr]++
	}
	for addr, n := range votes {
		if n > sentinels/2 {
			return addr, nil
		}
	}
	return "", fmt.Errorf("no majority of the sentinels names a master (votes %v): %w", votes, errors.Join(errs...))
}

// KillMaster sends SIGKILL to the current master (as the sentinels name it) and returns its
// address once the process is gone: nothing is flushed, writes it acknowledged that did not
// reach the replica are lost, as in a real crash. The sentinels then promote the replica on
// their own (see WaitPromoted).
func (s *Sentinel) KillMaster() (string, error) {
	addr, err := s.Master()
	if err != nil {
		return "", fmt.Errorf("kill master: %w", err)
	}
	srv := s.Node(addr)
	if srv == nil {
		return "", fmt.Errorf("kill master: no node at %s", addr)
	}
	role, err := srv.role()
	if err != nil {
		return "", fmt.Errorf("kill master %s: %w", addr, err)
	}
	if role != "master" {
		return "", fmt.Errorf("kill master: %s is a %s", addr, role)
	}
	if err := srv.Kill(); err != nil {
		return "", fmt.Errorf("kill master: %w", err)
	}
	return addr, nil
}

// WaitPromoted waits (bounded by timeout) until every running sentinel names a master other
// than old and that node reports role master, and returns its address: after KillMaster,
// that is when the replica was promoted and a client asking any sentinel finds it.
func (s *Sentinel) WaitPromoted(old string, timeout time.Duration) (string, error) {
	var promoted string
	last := errors.New("not checked")
	err := poll(timeout, func() bool {
		promoted, last = s.checkPromoted(old)
		return last == nil
	})
	if err != nil {
		return "", fmt.Errorf("no promotion: %w (last: %w)", err, last)
	}
	return promoted, nil
}

func (s *Sentinel) checkPromoted(old string) (string, error) {
	var named string
	for _, sn := range s.sentinels {
		if !sn.running() {
			continue
		}
		addr, err := sn.masterAddrByName()
		if err != nil {
			return "", err
		}
		if addr == old || (named != "" && addr != named) {
			return "", fmt.Errorf("%s names %s as master (old %s, others %q)", sn.Addr(), addr, old, named)
		}
		named = addr
	}
	srv := s.Node(named)
	if srv == nil {
		return "", fmt.Errorf("the sentinels name %q, not a node of this deployment", named)
	}
	role, err := srv.role()
	if err != nil {
		return "", err
	}
	if role != "master" {
		return "", fmt.Errorf("%s is still a %s", named, role)
	}
	return named, nil
}

// WaitReplicaInSync waits (bounded by timeout) until the node at addr is a replica of the
// current master with its link up and no sync in progress: after a killed master was
// restarted, that is when the sentinels reconfigured it and it caught up. The master is
// asked of the sentinels at every look, so a failover meanwhile is followed.
func (s *Sentinel) WaitReplicaInSync(addr string, timeout time.Duration) error {
	srv := s.Node(addr)
	if srv == nil {
		return fmt.Errorf("wait replica: no node at %s", addr)
	}
	last := errors.New("not checked")
	err := poll(timeout, func() bool {
		var master string
		if master, last = s.Master(); last == nil {
			last = replicaOf(srv, master)
		}
		return last == nil
	})
	if err != nil {
		return fmt.Errorf("%s not an in-sync replica of the master: %w (last: %w)%s", addr, err, last, srv.logTail())
	}
	return nil
}

// waitInSync waits until srv is an in-sync replica of master.
func (s *Sentinel) waitInSync(srv *Server, master string, timeout time.Duration) error {
	last := errors.New("not checked")
	err := poll(timeout, func() bool {
		last = replicaOf(srv, master)
		return last == nil
	})
	if err != nil {
		return fmt.Errorf("%s not an in-sync replica of %s: %w (last: %w)%s", srv.Addr(), master, err, last, srv.logTail())
	}
	return nil
}

// WaitSettled waits (bounded by timeout) until a majority of the sentinels name a master
// that reports role master and every other data node is an in-sync replica of it, and
// returns the master. On a busy machine the sentinels may fail over again while a killed
// master restarts (the new master missed down-after-milliseconds): WaitSettled returns
// whichever node they settled on.
func (s *Sentinel) WaitSettled(timeout time.Duration) (string, error) {
	var master string
	last := errors.New("not checked")
	err := poll(timeout, func() bool {
		master, last = s.settled()
		return last == nil
	})
	if err != nil {
		return "", fmt.Errorf("no settled master and replica: %w (last: %w)", err, last)
	}
	return master, nil
}

func (s *Sentinel) settled() (string, error) {
	master, err := s.Master()
	if err != nil {
		return "", err
	}
	srv := s.Node(master)
	if srv == nil {
		return "", fmt.Errorf("the sentinels name %q, not a node of this deployment", master)
	}
	role, err := srv.role()
	if err != nil {
		return "", err
	}
	if role != "master" {
		return "", fmt.Errorf("%s, named master, reports role %s", master, role)
	}
	for _, n := range s.nodes {
		if n.Addr() == master {
			continue
		}
		if err := replicaOf(n, master); err != nil {
			return "", err
		}
	}
	return master, nil
}

// replicaOf reports why srv is not (yet) an in-sync replica of master, or nil.
func replicaOf(srv *Server, master string) error {
	info, err := srv.replicationInfo()
	if err != nil {
		return err
	}
	if at := net.JoinHostPort(info["master_host"], info["master_port"]); info["role"] != "slave" || at != master {
		return fmt.Errorf("%s: role %s of %s", srv.Addr(), info["role"], at)
	}
	_, err = srv.replicaInSync()
	return err
}

// cleanup kills the sentinels first (so none of them fails over what is being stopped),
// then the data nodes.
func (s *Sentinel) cleanup() {
	killAll(s.t, s.sentinels)
	killAll(s.t, s.nodes)
}

// running reports whether the server's process is running.
func (s *Server) running() bool {
	pid, err := s.readPID()
	return err == nil && isRedisProcess(pid)
}

// sentinelCommand runs commands on this sentinel over a fresh connection.
func (s *Server) sentinelCommand(fn func(ctx context.Context, c *redis.SentinelClient) error) error {
	c := redis.NewSentinelClient(&redis.Options{
		Addr:            s.Addr(),
		DisableIdentity: true,
		MaxRetries:      -1,
		DialerRetries:   1,
		DialTimeout:     time.Second,
	})
	defer func() { _ = c.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := fn(ctx, c); err != nil {
		return fmt.Errorf("sentinel %s: %w", s.Addr(), err)
	}
	return nil
}

// masterAddrByName returns the master's address as this sentinel names it.
func (s *Server) masterAddrByName() (string, error) {
	var hostPort []string
	err := s.sentinelCommand(func(ctx context.Context, c *redis.SentinelClient) (err error) {
		hostPort, err = c.GetMasterAddrByName(ctx, SentinelMasterName).Result()
		return err
	})
	if err != nil {
		return "", err
	}
	if len(hostPort) != 2 {
		return "", fmt.Errorf("sentinel %s: get-master-addr-by-name answered %s", s.Addr(), strings.Join(hostPort, " "))
	}
	return net.JoinHostPort(hostPort[0], hostPort[1]), nil
}

// Failover asks one sentinel for a failover without waiting for the master to fail
// (SENTINEL FAILOVER), as an operator does for maintenance, and returns the address of the
// master it replaces: that master keeps running and is reconfigured as a replica of the
// promoted one. See WaitPromoted.
func (s *Sentinel) Failover() (string, error) {
	old, err := s.Master()
	if err != nil {
		return "", fmt.Errorf("failover: %w", err)
	}
	err = s.sentinels[0].sentinelCommand(func(ctx context.Context, c *redis.SentinelClient) error {
		return c.Failover(ctx, SentinelMasterName).Err()
	})
	if err != nil {
		return "", fmt.Errorf("failover: %w", err)
	}
	return old, nil
}
