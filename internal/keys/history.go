package keys

// History is the stream of topic t's rate and lag history (internal/history): one sample of
// its counters every few seconds, bounded by age and count. It carries the topic's tag.
func (s Space) History(t string) string { return s.Control + ":history:{" + t + "}" }
