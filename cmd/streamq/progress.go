package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// progress draws a one-line progress bar on stderr while a long operation runs, only when
// stderr is a terminal (never in scripts or logs). With a total it shows a bar, count of
// total, percentage, the elapsed time and an estimate of the time left; without one a count
// (or, with no count either, a spinner) and the elapsed time.
type progress struct {
	w     io.Writer
	label string
	unit  string // "entries", "dead letters"; "" for a plain spinner
	total int64
	// about marks total as an estimate ("~" before it); the bar stops short of 100% until
	// done when the count passes it.
	about   bool
	current atomic.Int64
	start   time.Time
	stop    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
}

// progressInterval is how often the bar is redrawn.
const progressInterval = 100 * time.Millisecond

// startProgress starts a progress line labelled label, counting unit up to total (0: no
// known total). It draws nothing unless the app's stderr is the process's terminal.
func (a *app) startProgress(label, unit string, total int64) *progress {
	return a.startProgressAbout(label, unit, total, false)
}

// startProgressAbout is startProgress with a total that is an estimate when about is set.
func (a *app) startProgressAbout(label, unit string, total int64, about bool) *progress {
	p := &progress{label: label, unit: unit, total: total, about: about, start: time.Now(), stop: make(chan struct{})}
	if f, ok := a.stderr.(*os.File); !ok || !isTerminal(f) {
		return p // p.w == nil: updates are counted, nothing is drawn
	}
	p.w = a.stderr
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(progressInterval)
		defer tick.Stop()
		for frame := 0; ; frame++ {
			p.draw(frame)
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// set records the current count.
func (p *progress) set(n int64) { p.current.Store(n) }

// add adds to the current count.
func (p *progress) add(n int64) { p.current.Add(n) }

// done stops drawing and clears the line. It is idempotent.
func (p *progress) done() {
	p.once.Do(func() {
		close(p.stop)
		p.wg.Wait()
		if p.w != nil {
			fmt.Fprint(p.w, "\r\033[K")
		}
	})
}

var spinner = []string{"|", "/", "-", `\`}

// eta is ", ETA 4s": the time left at the pace so far for n of total done; "" before the
// first one is.
func eta(elapsed time.Duration, n, total int64) string {
	if n <= 0 || elapsed <= 0 || n >= total {
		return ""
	}
	left := time.Duration(float64(elapsed) * float64(total-n) / float64(n))
	return ", ETA " + left.Round(time.Second).String()
}

func (p *progress) draw(frame int) {
	const width = 30
	n := p.current.Load()
	elapsed := time.Since(p.start).Round(100 * time.Millisecond)
	var line string
	switch {
	case p.total > 0:
		total, about := max(p.total, n), ""
		if p.about {
			about = "~"
			total = max(p.total, n+1) // an estimate passed: not done yet
		}
		filled := int(int64(width) * n / total)
		line = fmt.Sprintf("%s [%s%s] %d/%s%d %s %3d%% %s%s", p.label,
			strings.Repeat("#", filled), strings.Repeat(".", width-filled),
			n, about, p.total, p.unit, 100*n/total, elapsed, eta(elapsed, n, total))
	case p.unit != "":
		line = fmt.Sprintf("%s %s %d %s %s", p.label, spinner[frame%len(spinner)], n, p.unit, elapsed)
	default:
		line = fmt.Sprintf("%s %s %s", p.label, spinner[frame%len(spinner)], elapsed)
	}
	fmt.Fprint(p.w, "\r\033[K"+line)
}
