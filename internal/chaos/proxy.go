// Package chaos injects network faults between clients and a server, for tests and the
// soak program: Proxy is a TCP proxy whose connections can be cut off (a black hole, as in
// a network partition), flapped (every connection reset at once), slowed down, or made to
// lose a server's replies after the server ran the commands.
package chaos

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// dialTimeout bounds the proxy's connection to the target.
const dialTimeout = time.Second

// Proxy forwards every TCP connection it accepts to a target address. Its methods are safe
// for concurrent use.
type Proxy struct {
	target string
	l      net.Listener

	mu      sync.Mutex
	links   map[*link]bool // value: doomed (lived through a cut; closed on Restore)
	latency time.Duration
	losses  int           // replies still to lose (LoseReplies)
	flowing chan struct{} // closed while traffic may pass; open during a cut
	closed  bool
	wg      sync.WaitGroup
}

// Listen starts a proxy on a free 127.0.0.1 port forwarding to target.
func Listen(target string) (*Proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("chaos proxy: listen: %w", err)
	}
	p := &Proxy{target: target, l: l, links: map[*link]bool{}, flowing: make(chan struct{})}
	close(p.flowing)
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the address clients connect to instead of the target.
func (p *Proxy) Addr() string { return p.l.Addr().String() }

// Cut stops all traffic: no byte passes in either direction, on existing connections and on
// those accepted while cut, as if the network between client and server were partitioned.
// Clients see their calls time out.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.isCut() {
		return
	}
	p.flowing = make(chan struct{})
	for l := range p.links {
		p.links[l] = true
	}
}

// Restore ends a cut. The connections that lived through it are closed first and the bytes
// they held are dropped, as when a partition lasts long enough for TCP to give up: nothing
// sent during the cut arrives late. New connections work at once.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.isCut() {
		return
	}
	for l, doomed := range p.links {
		if doomed {
			l.close()
			delete(p.links, l)
		}
	}
	close(p.flowing)
}

// Reset closes every current connection at once (a network flap); new connections work.
func (p *Proxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for l := range p.links {
		l.close()
		delete(p.links, l)
	}
}

// SetLatency delays every chunk of data by d in each direction from now on (0: none), so a
// request-reply round trip takes at least 2d longer.
func (p *Proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latency = d
}

// LoseReplies makes the proxy lose the next n replies of the server (replacing a count not
// used up yet): each time, the data the server sent back is dropped and that connection
// closed, after the server ran what the client sent, as when a connection breaks between a
// command and its reply. The client sees its connection fail and may send the command again.
func (p *Proxy) LoseReplies(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.losses = n
}

// takeLoss reports whether the reply at hand is one to lose.
func (p *Proxy) takeLoss() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.losses == 0 {
		return false
	}
	p.losses--
	return true
}

// Close stops accepting, closes every connection and returns once every goroutine of the
// proxy has exited. It is idempotent.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	err := p.l.Close()
	for l := range p.links {
		l.close()
		delete(p.links, l)
	}
	p.mu.Unlock()
	p.wg.Wait()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("chaos proxy: close: %w", err)
	}
	return nil
}

// isCut reports whether traffic is stopped. The caller holds p.mu.
func (p *Proxy) isCut() bool {
	select {
	case <-p.flowing:
		return false
	default:
		return true
	}
}

// state returns the gate to wait on and the latency to apply to a chunk read now.
func (p *Proxy) state() (<-chan struct{}, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.flowing, p.latency
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return // closed
		}
		p.open(c)
	}
}

// open connects an accepted client to the target, unless the proxy is cut: then the client
// connection is held, silent, until Restore closes it.
func (p *Proxy) open(c net.Conn) {
	p.mu.Lock()
	cut := p.isCut()
	p.mu.Unlock()
	var s net.Conn
	if !cut {
		var err error
		if s, err = net.DialTimeout("tcp", p.target, dialTimeout); err != nil {
			_ = c.Close() // the target is down: the client sees its connection refused
			return
		}
	}
	l := newLink(c, s)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || s == nil && !p.isCut() {
		l.close() // closed, or restored while this connection was held: the client retries
		return
	}
	p.links[l] = p.isCut() // a cut that began while dialling dooms it too
	if s != nil {
		l.start(p)
	}
}
