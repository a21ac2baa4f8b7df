package dashboard_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/dashboard"
	"github.com/streamq-dev/streamq/internal/fulltest"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// The child of TestKilledMember is this test binary run again with -test.run=^TestMemberChild$
// and memberChildEnv set to "addr,topic,group,name".
const memberChildEnv = "STREAMQ_DASHBOARD_MEMBER_CHILD"

// killHeartbeat is the child's heartbeat interval (its RebalanceInterval): "no member seen
// since" must be that accurate.
const killHeartbeat = 150 * time.Millisecond

// TestMemberChild is the killed member's process: a Subscriber that acks everything and says
// "ready" once it consumes, until it is killed. It does nothing in a normal run.
func TestMemberChild(t *testing.T) {
	spec := os.Getenv(memberChildEnv)
	if spec == "" {
		t.Skip("the child process of TestKilledMember")
	}
	f := strings.Split(spec, ",")
	client := redis.NewClient(&redis.Options{Addr: f[0]})
	cfg := fulltest.Config(client, f[2], 1)
	cfg.Membership.ConsumerName, cfg.Membership.RebalanceInterval = f[3], killHeartbeat
	sub, err := streamq.NewSubscriber(cfg, watermill.NopLogger{})
	require.NoError(t, err)
	ch, err := sub.Subscribe(context.Background(), f[1])
	require.NoError(t, err)
	ready := false
	for m := range ch {
		m.Ack()
		if !ready {
			fmt.Println("ready")
			ready = true
		}
	}
}

// TestKilledMember: a member is killed (SIGKILL) at a known time while messages keep coming.
// The group page says no member was seen since that time, accurate to the heartbeat interval
// (its last heartbeat, not a once-a-minute record), names the member with its host and PID;
// "lag growing since" is when the lag began to grow (after the kill, not the start of the
// sampled window); and the next step starts a member instead of adding members.
func TestKilledMember(t *testing.T) {
	redistest.SkipShort(t, "kills a member process")
	e := newEnv(t)
	require.NoError(t, e.adm.CreateTopic(e.ctx, "orders", 1))
	s := e.serve(dashboard.Options{SampleInterval: 100 * time.Millisecond, HistoryInterval: -1})
	sampled := time.Now()
	s.getJSON("/api/topics/orders/rates", &struct{}{}) // the topic is sampled from now on
	stop := e.steadyTraffic("orders")
	defer stop()
	child := startMember(t, e.client.Options().Addr, "orders", "billing", "worker-7")
	time.Sleep(3 * time.Second) // the member consumes, the lag stays flat in the samples
	require.NoError(t, child.Process.Signal(syscall.SIGKILL))
	killed := time.Now()
	_ = child.Wait()

	var g killedGroupJSON
	require.Eventually(t, func() bool {
		s.getJSON("/api/topics/orders/rates", &struct{}{})
		s.getJSON("/api/topics/orders/groups/billing", &g)
		return g.Health.code("no-live-member") != nil && g.Health.code("lag-growing") != nil
	}, 30*time.Second, 100*time.Millisecond, "no member, and the lag grows")
	require.NotNil(t, g.LastSeen)
	assert.False(t, g.LastSeen.After(killed.Add(50*time.Millisecond)), "seen %s, killed %s", g.LastSeen, killed)
	assert.Less(t, killed.Sub(*g.LastSeen), killHeartbeat+200*time.Millisecond, "accurate to the heartbeat interval")
	require.NotNil(t, g.LastMember)
	host, _ := os.Hostname()
	assert.Equal(t, "worker-7", g.LastMember.Name)
	assert.Equal(t, child.Process.Pid, g.LastMember.PID)
	assert.Equal(t, host, g.LastMember.Host)
	assert.False(t, g.LastMember.Left, "it was killed: its heartbeats stopped")

	none := g.Health.code("no-live-member")
	assert.Contains(t, none.Text, "no member seen since "+g.LastSeen.UTC().Format("2006-01-02 15:04:05 UTC"))
	assert.Equal(t, fmt.Sprintf("last member: worker-7 (%s pid %d), its heartbeats stopped", host, child.Process.Pid), none.Detail)
	grows := g.Health.code("lag-growing")
	require.NotNil(t, grows.Since)
	assert.WithinDuration(t, killed, *grows.Since, 1500*time.Millisecond, "growing since the kill, not since %s", sampled)
	assert.NotContains(t, grows.Next, "add members")
	assert.Contains(t, grows.Next, "start a Subscriber of group billing")
}

type killedGroupJSON struct {
	Health     healthJSON `json:"health"`
	LastSeen   *time.Time `json:"lastSeen"`
	LastMember *struct {
		Name string `json:"name"`
		Host string `json:"host"`
		PID  int    `json:"pid"`
		Left bool   `json:"left"`
	} `json:"lastMember"`
}

// startMember starts TestMemberChild as member name of group on topic and waits until it
// consumes; it is killed at cleanup if still running.
func startMember(t *testing.T, addr, topic, group, name string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMemberChild$", "-test.v")
	cmd.Env = append(os.Environ(), memberChildEnv+"="+strings.Join([]string{addr, topic, group, name}, ","))
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "ready" {
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("the member never consumed")
	}
	return cmd
}

// steadyTraffic publishes 5 messages to topic every 100 ms until stop is called (at the
// latest, at cleanup).
func (e *env) steadyTraffic(topic string) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			msgs := make([]*message.Message, 5)
			for j := range msgs {
				msgs[j] = message.NewMessage(watermill.NewUUID(), []byte("m"+strconv.Itoa(i)))
			}
			if err := e.pub.Publish(topic, msgs...); err != nil {
				e.t.Errorf("publish: %v", err)
			}
		}
	}()
	var once bool
	stop = func() {
		if !once {
			once = true
			close(done)
			<-finished
		}
	}
	e.t.Cleanup(stop)
	return stop
}
