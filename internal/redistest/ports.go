package redistest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Ports for test servers come from below the kernel's ephemeral range: a port the kernel hands
// out for "127.0.0.1:0" is also one it hands out for outgoing connections, so between the
// probe and the server's bind one of the tests' own connections could take it (the server then
// fails with "Address already in use"). Below the range only another listener can.
const (
	lowestPort       = 10000
	defaultEphemeral = 32768 // Linux's default ip_local_port_range start
	portTries        = 200
)

// ephemeralStart is the first port of the kernel's ephemeral range.
func ephemeralStart() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return defaultEphemeral
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return defaultEphemeral
	}
	n, err := strconv.Atoi(fields[0])
	if err != nil || n <= lowestPort+1000 {
		return defaultEphemeral
	}
	return n
}

// handed is every port listenFree returned in this process: none is returned twice, so two
// tests of one binary never race for a port (another process still can: launches check).
var handed = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// listenFree opens a listener on a free loopback port below the ephemeral range, or on any
// free port when none is found there.
func listenFree() (net.Listener, error) {
	top := ephemeralStart()
	handed.Lock()
	defer handed.Unlock()
	for range portTries {
		port := lowestPort + rand.IntN(top-lowestPort) //nolint:gosec // a port, not a secret
		if handed.ports[port] {
			continue
		}
		if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			handed.ports[port] = true
			return l, nil
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("find free port: %w", err)
	}
	return l, nil
}

// freePort returns a free loopback TCP port.
func freePort() (int, error) {
	l, err := listenFree()
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("close probe listener: %w", err)
	}
	return port, nil
}

// freePorts returns n distinct free loopback ports: every listener stays open until all are
// chosen, so none is handed out twice.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := listenFree()
		if err != nil {
			return nil, err
		}
		defer func() { _ = l.Close() }()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
