package chaos

import (
	"net"
	"sync"
	"time"
)

// chunkSize is the most bytes read at once from one side.
const chunkSize = 32 * 1024

// link is one proxied connection: the client side, the target side (nil while held during a
// cut) and, once started, a reader and a writer per direction.
type link struct {
	client, server net.Conn
	done           chan struct{} // closed by close
	once           sync.Once
}

// chunk is data read from one side, to be written to the other at due.
type chunk struct {
	data []byte
	due  time.Time
}

func newLink(client, server net.Conn) *link {
	return &link{client: client, server: server, done: make(chan struct{})}
}

// start runs both directions; p.wg tracks the goroutines. The caller holds p.mu.
func (l *link) start(p *Proxy) {
	up, down := make(chan chunk, 64), make(chan chunk, 64)
	p.wg.Add(4)
	go l.read(p, l.client, up)
	go l.write(p, l.server, up, false)
	go l.read(p, l.server, down)
	go l.write(p, l.client, down, true)
}

// close closes both connections; every goroutine of the link then exits.
func (l *link) close() {
	l.once.Do(func() {
		close(l.done)
		_ = l.client.Close()
		if l.server != nil {
			_ = l.server.Close()
		}
	})
}

// read reads chunks from src and queues them stamped with their due time. Any read error
// (the peer closed, a reset) closes the whole link.
func (l *link) read(p *Proxy, src net.Conn, out chan<- chunk) {
	defer p.wg.Done()
	defer l.close()
	for {
		buf := make([]byte, chunkSize)
		n, err := src.Read(buf)
		if n > 0 {
			_, latency := p.state()
			select {
			case out <- chunk{data: buf[:n], due: time.Now().Add(latency)}:
			case <-l.done:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// write writes queued chunks to dst in order, each once it is due and traffic flows. On the
// replies' side, a reply the proxy is told to lose is dropped and the link closed.
func (l *link) write(p *Proxy, dst net.Conn, in <-chan chunk, replies bool) {
	defer p.wg.Done()
	defer l.close()
	for {
		var c chunk
		select {
		case c = <-in:
		case <-l.done:
			return
		}
		if !l.waitDue(c.due) || !l.waitFlowing(p) {
			return
		}
		if replies && p.takeLoss() {
			return // the server ran the commands; the client never hears of it
		}
		if _, err := dst.Write(c.data); err != nil {
			return
		}
	}
}

// waitDue waits until t; false when the link closed first.
func (l *link) waitDue(t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-l.done:
		return false
	}
}

// waitFlowing waits while the proxy is cut; false when the link closed first (Restore closes
// the links that lived through a cut, dropping what they held).
func (l *link) waitFlowing(p *Proxy) bool {
	gate, _ := p.state()
	select {
	case <-gate:
		return true
	case <-l.done:
		return false
	}
}
