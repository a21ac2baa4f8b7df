package main

import (
	"context"
	"fmt"
	"io"

	"github.com/streamq-dev/streamq/admin"
)

// memoryUseView is who holds Redis's memory in "info --json" and "stats --json", while some
// server is at or above the high-water mark (admin.MemoryUse); absent otherwise.
type memoryUseView struct {
	// Groups are what each group of the topic holds back, the one holding the most first.
	Groups []groupMemoryView `json:"groups"`
	// DeadLetters and DeadLetterBytes are the topic's DLQ, kept by no group.
	DeadLetters     int64 `json:"deadLetters"`
	DeadLetterBytes int64 `json:"deadLetterBytes"`
	// Cause is the group that holds back the most of every topic; null when none holds any.
	Cause *groupMemoryView `json:"cause"`
}

// groupMemoryView is admin.GroupMemory.
type groupMemoryView struct {
	Topic        string `json:"topic"`
	Group        string `json:"group"`
	Unacked      int64  `json:"unacked"`      // lag and pending entries
	UnackedBytes int64  `json:"unackedBytes"` // about their memory (sampled entry sizes)
	Retries      int64  `json:"retries"`
	RetryBytes   int64  `json:"retryBytes"`
}

func groupMemoryOf(g admin.GroupMemory) groupMemoryView {
	return groupMemoryView{Topic: g.Topic, Group: g.Group, Unacked: g.Unacked, UnackedBytes: g.UnackedBytes, Retries: g.Retries, RetryBytes: g.RetryBytes}
}

func newMemoryUseView(topic string, u admin.MemoryUse) *memoryUseView {
	v := &memoryUseView{Groups: []groupMemoryView{}}
	for _, t := range u.Topics {
		if t.Topic != topic {
			continue
		}
		v.DeadLetters, v.DeadLetterBytes = t.DeadLetters, t.DeadLetterBytes
		for _, g := range t.Groups {
			v.Groups = append(v.Groups, groupMemoryOf(g))
		}
	}
	if u.Cause != nil {
		c := groupMemoryOf(*u.Cause)
		v.Cause = &c
	}
	return v
}

// memoryUseOf reads who holds the memory, seen from topic, when m says some server is at or
// above the high-water mark or publishes are refused; nil otherwise (no read).
func memoryUseOf(ctx context.Context, adm *admin.Admin, topic string, m admin.TopicMemory) (*memoryUseView, error) {
	pressed := m.Refused()
	for _, s := range m.Servers {
		pressed = pressed || s.High || s.Full
	}
	if !pressed {
		return nil, nil
	}
	u, err := adm.MemoryUse(ctx)
	if err != nil {
		return nil, err
	}
	return newMemoryUseView(topic, u), nil
}

// heldText is what g holds back: "400 unacked (~1.1 MiB), 2 retries (~1.2 KiB)".
func heldText(g groupMemoryView) string {
	out := fmt.Sprintf("%d unacked (~%s)", g.Unacked, admin.SizeText(g.UnackedBytes))
	if g.Retries > 0 {
		out += fmt.Sprintf(", %s (~%s)", plural(g.Retries, "retry", "retries"), admin.SizeText(g.RetryBytes))
	}
	return out
}

// causeLine says who Redis's memory is held by, seen from topic: "the cause: group audit, here:
// ..." on its own topic, "Redis is full because of group audit on topic orders: ..."
// elsewhere ("Redis memory is high because of ..." below maxmemory); names cut to fit width
// (proseName, 0: whole).
func causeLine(topic string, v *memoryUseView, full bool, width int) string {
	c := v.Cause
	switch {
	case c == nil:
		return "no group holds memory back: length retention and dead letters keep it"
	case c.Topic == topic:
		return fmt.Sprintf("the cause: group %s, here: %s", proseName(c.Group, width), heldText(*c))
	}
	return fmt.Sprintf("%s because of group %s on topic %s: %s", pressure(full), proseName(c.Group, width),
		proseName(c.Topic, width), heldText(*c))
}

// pressure is "Redis is full", or "Redis memory is high" below maxmemory.
func pressure(full bool) string {
	if full {
		return "Redis is full"
	}
	return "Redis memory is high"
}

// printHeld is info's block of who holds the memory: what each group of the topic holds back
// and its dead letters, then the cause; the names cut to fit width (0: whole).
func printHeld(w io.Writer, width int, topic string, v *memoryUseView, full bool) error {
	if v == nil {
		return nil
	}
	fmt.Fprintln(w, "\nmemory held back (approximate sizes, sampled):")
	t := newTable(w, "GROUP", "UNACKED", "~SIZE", "RETRIES", "~SIZE").fit(width, 0)
	for _, g := range v.Groups {
		t.row(g.Group, g.Unacked, admin.SizeText(g.UnackedBytes), g.Retries, admin.SizeText(g.RetryBytes))
	}
	t.row("(dead letters)", v.DeadLetters, admin.SizeText(v.DeadLetterBytes), "-", "-")
	if err := t.flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, causeLine(topic, v, full, width))
	return err
}
