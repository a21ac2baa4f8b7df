package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// ClusterNodeTimeout is the cluster-node-timeout of every node: a master unreachable
	// this long is marked failed and one of its replicas is promoted.
	ClusterNodeTimeout = 2 * time.Second
	// clusterSlots is the number of hash slots of a Redis Cluster.
	clusterSlots = 16384
	// clusterCreateTimeout bounds redis-cli --cluster create.
	clusterCreateTimeout = time.Minute
	// clusterReadyTimeout bounds the wait for a new cluster to be formed and ok.
	clusterReadyTimeout = 30 * time.Second
)

// Cluster is a Redis Cluster of redis-server processes owned by one test: every node runs
// daemonized on free 127.0.0.1 ports (client and cluster bus) in its own directory under
// t.TempDir(), with AOF on and cluster-node-timeout ClusterNodeTimeout. t.Cleanup kills every
// node.
type Cluster struct {
	t        testing.TB
	cli      string // path of redis-cli
	masters  int
	replicas int       // in all
	nodes    []*Server // as created: the masters first, then the replicas
}

// StartCluster starts masters*(1+replicasPerMaster) nodes, joins them with
// `redis-cli --cluster create ... --cluster-replicas N --cluster-yes`, and waits (bounded)
// until every node reports cluster_state:ok with all 16384 slots covered and knows every other
// node, every replica is in sync with its master, and every node's CLUSTER SLOTS (what
// clients route by) lists every replica. masters must be at least 3 (what
// redis-cli accepts). Missing redis-server or redis-cli skips the test, or fails it when
// RequireRedis() is true. Under -short it skips the test: cluster legs run in make test.
func StartCluster(t testing.TB, masters, replicasPerMaster int) *Cluster {
	t.Helper()
	SkipShort(t, "a Redis Cluster")
	if masters < 3 || replicasPerMaster < 0 {
		t.Fatalf("redistest: a cluster needs >= 3 masters and >= 0 replicas per master, got %d and %d",
			masters, replicasPerMaster)
	}
	bin := lookupBinary(t, "redis-server")
	cli := lookupBinary(t, "redis-cli")
	start := time.Now()
	root := t.TempDir()
	c := &Cluster{t: t, cli: cli, masters: masters, replicas: masters * replicasPerMaster}
	t.Cleanup(c.cleanup) // after TempDir: runs before the directory is removed
	n := masters * (1 + replicasPerMaster)
	for attempt := 1; ; attempt++ {
		err := c.launchNodes(bin, filepath.Join(root, "try"+strconv.Itoa(attempt)), n)
		if err == nil {
			break
		}
		if !errors.Is(err, errPortTaken) || attempt == launchAttempts {
			t.Fatalf("redistest: start cluster nodes: %v", err)
		}
		t.Logf("redistest: %v; trying other ports", err)
		killAll(t, c.nodes)
		c.nodes = nil
	}
	launched := time.Now()
	if err := c.create(replicasPerMaster); err != nil {
		t.Fatalf("redistest: %v", err)
	}
	created := time.Now()
	if err := c.waitFormed(clusterReadyTimeout); err != nil {
		t.Fatalf("redistest: cluster not ready: %v", err)
	}
	t.Logf("redistest: cluster of %d masters and %d replicas ready in %s (start %s, create %s, settle %s)",
		masters, masters*replicasPerMaster, time.Since(start).Round(time.Millisecond),
		launched.Sub(start).Round(time.Millisecond), created.Sub(launched).Round(time.Millisecond),
		time.Since(created).Round(time.Millisecond))
	return c
}

// launchNodes starts n cluster-enabled nodes on fresh ports in directories under dir.
func (c *Cluster) launchNodes(bin, dir string, n int) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("create directory: %w", err)
	}
	ports, err := freePorts(2 * n) // client port and cluster bus port of each node
	if err != nil {
		return err
	}
	for i := range n {
		s, err := newClusterNode(c.t, bin, filepath.Join(dir, "node"+strconv.Itoa(i)), ports[2*i], ports[2*i+1])
		if err != nil {
			return err
		}
		c.nodes = append(c.nodes, s)
	}
	return launchAll(c.nodes)
}

// newClusterNode prepares a cluster-enabled server in dir.
func newClusterNode(t testing.TB, bin, dir string, port, busPort int) (*Server, error) {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create node directory: %w", err)
	}
	extra := []string{
		"cluster-enabled yes",
		"cluster-config-file nodes.conf",
		"cluster-node-timeout " + strconv.FormatInt(ClusterNodeTimeout.Milliseconds(), 10),
		"cluster-port " + strconv.Itoa(busPort),
		"repl-diskless-sync-delay 0", // replicas sync at once, not after 5s
		// Redis 7 lists a replica in CLUSTER SLOTS (where clients find it) only once its
		// replication offset is not 0; on an idle master that takes the first replication
		// PING, 10s by default.
		"repl-ping-replica-period 1",
	}
	return newServer(t, bin, port, dir, extra)
}

// launchAll starts every server at once and waits until each answers PING.
func launchAll(nodes []*Server) error {
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, s := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.mu.Lock()
			defer s.mu.Unlock()
			errs[i] = s.launch()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// create runs redis-cli --cluster create over every node.
func (c *Cluster) create(replicasPerMaster int) error {
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicasPerMaster), "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), clusterCreateTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, c.cli, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("redis-cli --cluster create: %w\n%s%s", err, out, c.nodes[0].logTail())
	}
	return nil
}

// Addrs returns the address ("127.0.0.1:PORT") of every node, in creation order: the
// masters first, then the replicas. Roles change after a failover: see Masters.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.nodes))
	for i, s := range c.nodes {
		out[i] = s.Addr()
	}
	return out
}

// Client returns a new ClusterClient over every node; it is closed in t.Cleanup.
func (c *Cluster) Client(t testing.TB) *redis.ClusterClient {
	t.Helper()
	return c.ClientWith(t, nil)
}

// ClientWith is Client with options changed by tweak (nil: none), e.g. a larger PoolSize.
func (c *Cluster) ClientWith(t testing.TB, tweak func(*redis.ClusterOptions)) *redis.ClusterClient {
	t.Helper()
	opts := &redis.ClusterOptions{Addrs: c.Addrs(), DisableIdentity: true}
	if tweak != nil {
		tweak(opts)
	}
	client := redis.NewClusterClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// Node returns the server listening on addr, or nil.
func (c *Cluster) Node(addr string) *Server {
	for _, s := range c.nodes {
		if s.Addr() == addr {
			return s
		}
	}
	return nil
}

// SlotRange is a range of hash slots and the master serving it.
type SlotRange struct {
	Start, End int
	Master     string   // address of the master
	Replicas   []string // addresses of its replicas
}

// Slots returns the slot map (CLUSTER SLOTS) as a live node sees it.
func (c *Cluster) Slots() ([]SlotRange, error) {
	lastErr := errors.New("no live node")
	for _, s := range c.liveNodes() {
		ranges, err := s.clusterSlots()
		if err == nil {
			return ranges, nil
		}
		lastErr = err
	}
	return nil, fmt.Errorf("read the slot map: %w", lastErr)
}

// MasterOf returns the address of the master serving slot.
func (c *Cluster) MasterOf(slot int) (string, error) {
	ranges, err := c.Slots()
	if err != nil {
		return "", err
	}
	for _, r := range ranges {
		if slot >= r.Start && slot <= r.End {
			return r.Master, nil
		}
	}
	return "", fmt.Errorf("slot %d is not served by any master", slot)
}

// Masters returns the addresses of the masters serving slots, sorted by their first slot.
func (c *Cluster) Masters() ([]string, error) {
	ranges, err := c.Slots()
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, r := range ranges {
		if !seen[r.Master] {
			seen[r.Master] = true
			out = append(out, r.Master)
		}
	}
	return out, nil
}

// KillMaster sends SIGKILL to the node at addr, which must be a master: nothing is flushed,
// writes it acknowledged that did not reach a replica are lost, as in a real crash. It
// returns once the process is gone; the cluster then fails over on its own (see WaitOK).
func (c *Cluster) KillMaster(addr string) error {
	s := c.Node(addr)
	if s == nil {
		return fmt.Errorf("kill master: no node at %s", addr)
	}
	role, err := s.role()
	if err != nil {
		return fmt.Errorf("kill master %s: %w", addr, err)
	}
	if role != "master" {
		return fmt.Errorf("kill master: %s is a %s", addr, role)
	}
	return s.Kill()
}

// WaitOK waits (bounded by timeout) until every running node reports cluster_state:ok with
// all slots served, and every master in the slot map is a running node: after KillMaster,
// that is when a replica was promoted and every node knows it.
func (c *Cluster) WaitOK(timeout time.Duration) error {
	last := errors.New("not checked")
	err := poll(timeout, func() bool {
		last = c.checkOK()
		return last == nil
	})
	if err != nil {
		return fmt.Errorf("cluster not ok: %w (last: %w)", err, last)
	}
	return nil
}

// checkOK reports why the cluster is not (yet) ok, or nil.
func (c *Cluster) checkOK() error {
	live := c.liveNodes()
	alive := map[string]bool{}
	for _, s := range live {
		alive[s.Addr()] = true
	}
	for _, s := range live {
		info, err := s.clusterInfo()
		if err != nil {
			return err
		}
		if info["cluster_state"] != "ok" || info["cluster_slots_ok"] != strconv.Itoa(clusterSlots) {
			return fmt.Errorf("%s: cluster_state:%s cluster_slots_ok:%s", s.Addr(), info["cluster_state"], info["cluster_slots_ok"])
		}
		ranges, err := s.clusterSlots()
		if err != nil {
			return err
		}
		for _, r := range ranges {
			if !alive[r.Master] {
				return fmt.Errorf("%s still maps slots %d-%d to %s", s.Addr(), r.Start, r.End, r.Master)
			}
		}
	}
	return nil
}

// waitFormed waits until the new cluster is ok on every node, every node knows all the
// others, there are as many masters as asked, and every replica is in sync with its master.
func (c *Cluster) waitFormed(timeout time.Duration) error {
	last := errors.New("not checked")
	err := poll(timeout, func() bool {
		last = c.checkFormed()
		return last == nil
	})
	if err != nil {
		return fmt.Errorf("%w (last: %w)%s", err, last, c.nodes[0].logTail())
	}
	return nil
}

func (c *Cluster) checkFormed() error {
	synced := 0
	for _, s := range c.nodes {
		info, err := s.clusterInfo()
		if err != nil {
			return err
		}
		want := map[string]string{
			"cluster_state":          "ok",
			"cluster_slots_assigned": strconv.Itoa(clusterSlots),
			"cluster_slots_ok":       strconv.Itoa(clusterSlots),
			"cluster_known_nodes":    strconv.Itoa(len(c.nodes)),
			"cluster_size":           strconv.Itoa(c.masters),
		}
		for k, v := range want {
			if info[k] != v {
				return fmt.Errorf("%s: %s:%s, want %s", s.Addr(), k, info[k], v)
			}
		}
		replica, err := s.replicaInSync()
		if err != nil {
			return err
		}
		if replica {
			synced++
		}
		if err := c.slotsListReplicas(s); err != nil {
			return err
		}
	}
	if synced != c.replicas {
		return fmt.Errorf("%d of %d replicas in sync", synced, c.replicas)
	}
	return nil
}

// slotsListReplicas reports a node whose CLUSTER SLOTS does not list every replica yet.
func (c *Cluster) slotsListReplicas(s *Server) error {
	ranges, err := s.clusterSlots()
	if err != nil {
		return err
	}
	listed := 0
	for _, r := range ranges {
		listed += len(r.Replicas)
	}
	if listed != c.replicas {
		return fmt.Errorf("%s: CLUSTER SLOTS lists %d of %d replicas", s.Addr(), listed, c.replicas)
	}
	return nil
}

// liveNodes returns the nodes whose process is running.
func (c *Cluster) liveNodes() []*Server {
	var out []*Server
	for _, s := range c.nodes {
		if pid, err := s.readPID(); err == nil && isRedisProcess(pid) {
			out = append(out, s)
		}
	}
	return out
}

// cleanup kills every node at once and waits until each is gone.
func (c *Cluster) cleanup() { killAll(c.t, c.nodes) }

// killAll kills every server at once, waits until each is gone and stops its watchdog.
func killAll(t testing.TB, nodes []*Server) {
	var wg sync.WaitGroup
	for _, s := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.killIfRunning(); err != nil {
				t.Errorf("redistest: cleanup: %v", err)
			}
			s.mu.Lock()
			s.stopWatchdog(t)
			s.mu.Unlock()
		}()
	}
	wg.Wait()
}

// killIfRunning sends SIGKILL to the server's process, if it runs, and waits until it is
// gone.
func (s *Server) killIfRunning() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	pid, err := s.readPID()
	if err != nil || !isRedisProcess(pid) {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill redis-server pid %d: %w", pid, err)
	}
	_ = os.Remove(s.pidfile)
	return s.waitDown(pid)
}

// command runs one command on this node over a fresh control connection.
func (s *Server) command(fn func(ctx context.Context, c *redis.Client) error) error {
	c := s.controlClient()
	defer func() { _ = c.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := fn(ctx, c); err != nil {
		return fmt.Errorf("%s: %w", s.Addr(), err)
	}
	return nil
}

// clusterInfo returns CLUSTER INFO as a map.
func (s *Server) clusterInfo() (map[string]string, error) {
	var raw string
	err := s.command(func(ctx context.Context, c *redis.Client) (err error) {
		raw, err = c.ClusterInfo(ctx).Result()
		return err
	})
	if err != nil {
		return nil, err
	}
	return parseInfo(raw), nil
}

// parseInfo reads "key:value" lines (CLUSTER INFO, INFO).
func parseInfo(raw string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(raw, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			out[k] = v
		}
	}
	return out
}

// clusterSlots returns CLUSTER SLOTS as this node sees it.
func (s *Server) clusterSlots() ([]SlotRange, error) {
	var slots []redis.ClusterSlot
	err := s.command(func(ctx context.Context, c *redis.Client) (err error) {
		slots, err = c.ClusterSlots(ctx).Result()
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]SlotRange, 0, len(slots))
	for _, sl := range slots {
		if len(sl.Nodes) == 0 {
			continue
		}
		r := SlotRange{Start: sl.Start, End: sl.End, Master: sl.Nodes[0].Addr}
		for _, n := range sl.Nodes[1:] {
			r.Replicas = append(r.Replicas, n.Addr)
		}
		out = append(out, r)
	}
	return out, nil
}

// role returns "master" or "slave" (ROLE).
func (s *Server) role() (string, error) {
	info, err := s.replicationInfo()
	if err != nil {
		return "", err
	}
	return info["role"], nil
}

func (s *Server) replicationInfo() (map[string]string, error) {
	var raw string
	err := s.command(func(ctx context.Context, c *redis.Client) (err error) {
		raw, err = c.Info(ctx, "replication").Result()
		return err
	})
	if err != nil {
		return nil, err
	}
	return parseInfo(raw), nil
}

// replicaInSync reports whether the node is a replica, and an error for a replica whose link
// to its master is not up or still syncing.
func (s *Server) replicaInSync() (bool, error) {
	info, err := s.replicationInfo()
	if err != nil {
		return false, err
	}
	if info["role"] != "slave" {
		return false, nil
	}
	if info["master_link_status"] != "up" || info["master_sync_in_progress"] != "0" {
		return true, fmt.Errorf("%s: replica link %s, sync in progress %s", s.Addr(), info["master_link_status"], info["master_sync_in_progress"])
	}
	return true, nil
}
