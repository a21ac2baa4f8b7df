package publish

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/codec"
)

// seqCall is one appendseq.lua call in a pipeline: its command, how many messages it carries
// (the records' answers follow their ids in the reply), and its records in their order.
type seqCall struct {
	cmd     *redis.StringSliceCmd
	msgs    int
	records []callRecord
}

// callRecord is a record a call names: its key, and for the sender's own what the record
// holds once the call's new runs are appended (nil when the sender did not know what it held,
// or when it is another producer's: a run sent again).
type callRecord struct {
	key   string
	mine  bool
	after *recordView
}

// seqRun is consecutive writes of one section that go as one run (see appendseq.lua).
type seqRun struct {
	writes []Write
	rec    int // the run's record, 1-based
	f      int // field and value arguments per entry; -1: the default layout's values
	off    bool
}

// section is one partition of a call: its stream, runs and offloaded payload keys.
type section struct {
	stream, index string
	runs          []seqRun
	payloadKeys   []string
}

// callPlan is what a call sends, before its arguments are laid out.
type callPlan struct {
	sections []section
	records  []callRecord
	byKey    map[string]int // record key -> its place in records, 1-based
	ttl      int64          // ms: the records' TTL (the window)
	pttl     int64          // ms: the offloaded payloads' TTL
	msgs     int
}

// queueSeqCall adds one appendseq.lua call of the partitions' batches to pipe, pointing each
// batch's results at their places in its reply. q (nil: none) is the producer that sends it.
func queueSeqCall(ctx context.Context, pipe redis.Pipeliner, batches []*seqBatch, q *Sequencer) *seqCall {
	p := &callPlan{byKey: map[string]int{}}
	for _, b := range batches {
		p.addSection(b)
	}
	p.state(q)
	call := &seqCall{cmd: redis.NewStringSliceCmd(ctx, p.args()...), msgs: p.msgs, records: p.records}
	_ = pipe.Process(ctx, call.cmd)
	at := 0
	for _, b := range batches {
		for _, r := range b.results {
			*r = Result{cmd: call.cmd, append: true, at: at, flat: true}
			at++
		}
	}
	return call
}

// addSection splits a batch into runs: consecutive numbers of one producer, all new or all
// sent again, all inline or all offloaded, with the same number of fields.
func (p *callPlan) addSection(b *seqBatch) {
	sec := section{stream: b.stream}
	for i, w := range b.writes {
		s, a := w.Seq, w.appendParts()
		f, off := a.layout()
		p.ttl = max(p.ttl, s.Window.Milliseconds(), 1)
		if off {
			sec.index = s.Index
			sec.payloadKeys = append(sec.payloadKeys, a.pkey)
			p.pttl = max(p.pttl, a.ttl)
		}
		if n := len(sec.runs); n > 0 && continues(sec.runs[n-1], w, f, off) {
			sec.runs[n-1].writes = b.writes[i-len(sec.runs[n-1].writes) : i+1]
			continue
		}
		sec.runs = append(sec.runs, seqRun{writes: b.writes[i : i+1], rec: p.record(s), f: f, off: off})
	}
	p.msgs += len(b.writes)
	p.sections = append(p.sections, sec)
}

// continues reports whether w, laid out as f and off, continues run.
func continues(run seqRun, w Write, f int, off bool) bool {
	last := run.writes[len(run.writes)-1].Seq
	s := w.Seq
	return run.f == f && run.off == off && s.Producer == last.Producer && s.Record == last.Record &&
		s.Seq == last.Seq+1 && s.fresh == last.fresh
}

// layout is how the entry goes in a run: f field and value arguments (-1: the default
// layout's three values), and whether it is offloaded.
func (a toAppend) layout() (f int, off bool) {
	if defaultLayout(a.fields) {
		return -1, a.ref != ""
	}
	return len(a.fields), a.ref != ""
}

// record is the place of s's record in the call, 1-based, added when new.
func (p *callPlan) record(s *Sequenced) int {
	key := s.recordKey()
	if at, ok := p.byKey[key]; ok {
		return at
	}
	p.records = append(p.records, callRecord{key: key})
	p.byKey[key] = len(p.records)
	return len(p.records)
}

// state fills in, for q's own records, what they hold after the call's new runs: known when q
// knew what they held and every new run continues the partition's numbers there.
func (p *callPlan) state(q *Sequencer) {
	if q == nil {
		return
	}
	runs := make([][]newRun, len(p.records))
	sentAgain := make([]bool, len(p.records))
	for _, sec := range p.sections {
		for _, run := range sec.runs {
			s := run.writes[0].Seq
			if s.Producer != q.Producer {
				continue
			}
			if !s.fresh {
				sentAgain[run.rec-1] = true
				continue
			}
			runs[run.rec-1] = append(runs[run.rec-1], newRun{name: s.Name, first: s.Seq, last: s.Seq + uint64(len(run.writes)) - 1})
		}
	}
	for i := range p.records {
		if runs[i] == nil && !sentAgain[i] {
			continue // another producer's record
		}
		r := &p.records[i]
		r.mine = true
		if !sentAgain[i] {
			r.after = q.view(r.key).with(runs[i])
		}
	}
}

// args lays the call out as appendseq.lua reads it: EVALSHA, its keys, its arguments.
func (p *callPlan) args() []any {
	nkeys, nargs := len(p.records), 7+2*len(p.records)
	for _, sec := range p.sections {
		nkeys++
		if sec.index != "" {
			nkeys += 1 + len(sec.payloadKeys)
		}
		nargs += 2 + 7*len(sec.runs)
		for _, run := range sec.runs {
			per := 3
			if run.f >= 0 {
				per = run.f
			}
			if run.off {
				per += 2
			}
			nargs += per * len(run.writes)
		}
	}
	out := make([]any, 0, 3+nkeys+nargs)
	out = append(out, "evalsha", appendSeqScript.Hash(), nkeys)
	for _, sec := range p.sections {
		out = append(out, sec.stream)
		if sec.index != "" {
			out = append(out, sec.index)
			for _, k := range sec.payloadKeys {
				out = append(out, k)
			}
		}
	}
	for _, r := range p.records {
		out = append(out, r.key)
	}
	out = append(out, p.ttl, p.pttl, len(p.sections), len(p.records), codec.UUIDField, codec.MetadataField, codec.PayloadField)
	for _, r := range p.records {
		believed, after := "", ""
		if r.after != nil {
			believed, after = r.after.before, r.after.held
		}
		out = append(out, believed, after)
	}
	for _, sec := range p.sections {
		out = sec.args(out)
	}
	return out
}

// args appends the section's arguments to out.
func (sec section) args(out []any) []any {
	off := "0"
	if sec.index != "" {
		off = "1"
	}
	out = append(out, len(sec.runs), off)
	for _, run := range sec.runs {
		out = run.args(out)
	}
	return out
}

// args appends the run's header and its messages' arguments to out.
func (run seqRun) args(out []any) []any {
	s := run.writes[0].Seq
	kind, off := "a", "0"
	if s.fresh {
		kind = "n"
	}
	if run.off {
		off = "1"
	}
	out = append(out, kind, run.rec, s.Name, s.Seq, len(run.writes), run.f, off)
	for _, w := range run.writes {
		a := w.appendParts()
		if run.off {
			out = append(out, a.ref, a.body)
		}
		if run.f == -1 {
			out = append(out, a.fields[1], a.fields[3], a.fields[5])
			continue
		}
		out = append(out, a.fields...)
	}
	return out
}

// learn tells q what its records hold from the call's reply: what it said they would, what
// the script read and returned, or nothing known when the call failed.
func (c *seqCall) learn(q *Sequencer) {
	reply, err := c.cmd.Result()
	for i, r := range c.records {
		if !r.mine {
			continue
		}
		at := c.msgs + i
		switch {
		case err != nil || at >= len(reply):
			q.forget(r.key)
		case reply[at] == "" && r.after != nil:
			q.learn(r.key, r.after)
		case strings.HasPrefix(reply[at], "="):
			q.learn(r.key, parseView(reply[at][1:]))
		default:
			q.forget(r.key)
		}
	}
}

// newRun is the numbers first..last, new, of one partition of a record.
type newRun struct {
	name        string
	first, last uint64
}

// recordView is what a producer's record holds, as far as its producer knows: what was
// written (held: "~" for no record, "" unknown), and parsed, its entries; with what the
// producer believed it held before the call that wrote it (before).
type recordView struct {
	held, before string
	entries      []viewEntry
}

// viewEntry is one partition in a record: its name, highest number appended, and the gaps
// below it as the record writes them ("a-b c-d", "" none).
type viewEntry struct {
	name string
	last uint64
	gaps string
}

// noRecord is the view of a record its producer never wrote.
var noRecord = &recordView{held: "~"}

// view is what q knows record key holds: noRecord when q never wrote it, unknown ("") when
// a call that wrote it did not answer.
func (q *Sequencer) view(key string) *recordView {
	if v, ok := q.views[key]; ok {
		return v
	}
	return noRecord
}

func (q *Sequencer) learn(key string, v *recordView) {
	if q.views == nil {
		q.views = map[string]*recordView{}
	}
	v.before = ""
	q.views[key] = v
}

func (q *Sequencer) forget(key string) { q.learn(key, &recordView{}) }

// with is what the record holds once runs are appended: nil when that is not known (the view
// is unknown, or a run does not continue its partition's numbers).
func (v *recordView) with(runs []newRun) *recordView {
	if v.held == "" {
		return nil
	}
	next := &recordView{before: v.held, entries: append(make([]viewEntry, 0, len(v.entries)+len(runs)), v.entries...)}
	for _, r := range runs {
		i := next.find(r.name)
		if i < 0 {
			next.entries = append(next.entries, viewEntry{name: r.name})
			i = len(next.entries) - 1
		}
		if next.entries[i].last != r.first-1 {
			return nil // numbers skipped: the script records the gap
		}
		next.entries[i].last = r.last
	}
	next.held = next.encode()
	return next
}

func (v *recordView) find(name string) int {
	for i, e := range v.entries {
		if e.name == name {
			return i
		}
	}
	return -1
}

// encode writes the view as appendseq.lua reads a record.
func (v *recordView) encode() string {
	var b strings.Builder
	for i, e := range v.entries {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(e.name)
		b.WriteByte(':')
		b.WriteString(strconv.FormatUint(e.last, 10))
		if e.gaps != "" {
			b.WriteByte(' ')
			b.WriteString(e.gaps)
		}
	}
	return b.String()
}

// parseView reads a record as appendseq.lua writes it ("": none); an entry it cannot read
// makes the view unknown.
func parseView(s string) *recordView {
	if s == "" {
		return &recordView{held: "~"}
	}
	v := &recordView{held: s}
	for entry := range strings.SplitSeq(s, ",") {
		name, rest, ok := strings.Cut(entry, ":")
		last, gaps, _ := strings.Cut(rest, " ")
		n, err := strconv.ParseUint(last, 10, 64)
		if !ok || err != nil {
			return &recordView{}
		}
		v.entries = append(v.entries, viewEntry{name: name, last: n, gaps: gaps})
	}
	return v
}
