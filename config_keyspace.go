package streamq

import "github.com/streamq-dev/streamq/internal/keys"

// Keyspace names the keys of a deployment: Publishers, Subscribers, admin, the CLI and the
// dashboard of one deployment must agree on it. Two deployments on one Redis keep apart by
// their prefixes. The zero Keyspace is the default.
type Keyspace struct {
	// StreamPrefix starts the partition and DLQ stream keys. Default "stream:topic".
	StreamPrefix string
	// ControlPrefix starts leases, registry, membership and the other control keys.
	// Default "streaming:mq".
	ControlPrefix string
}

func (k *Keyspace) setDefaults() {
	setDefault(&k.StreamPrefix, keys.DefaultStreamPrefix)
	setDefault(&k.ControlPrefix, keys.DefaultControlPrefix)
}

func (k Keyspace) validate() error {
	for _, p := range []struct{ name, v string }{{"Keyspace.StreamPrefix", k.StreamPrefix}, {"Keyspace.ControlPrefix", k.ControlPrefix}} {
		if p.v != "" {
			if err := keys.ValidateName(p.name, p.v); err != nil {
				return err
			}
		}
	}
	return nil
}
