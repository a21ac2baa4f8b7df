package member

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/script"
)

var (
	//go:embed lua/claim.lua
	claimSrc string
	//go:embed lua/closing.lua
	closingSrc string
	//go:embed lua/refresh.lua
	refreshSrc string

	claimScript   = script.New(claimSrc)
	closingScript = script.New(closingSrc)
	refreshScript = script.New(refreshSrc)
)

// ErrSuperseded is returned by the presence refresh and the heartbeat of a static member
// whose name another process (instance) took over: that process found this one silent for
// its presence window, or it is a second process started with the same name while this one
// could not refresh its presence.
var ErrSuperseded = errors.New("another process took over the member's name")

// Instance is one process's hold on a static member's name in a group (a member with a
// stable name that takes its partitions back when it restarts): the record in the group's
// instances hash, "instance|until|state", that says which process of the name is present
// and until when (server ms). The holder renews it (Refresh) several times per presence
// window, each time to one window past the server's clock. The process that holds the record
// may take over the leases its predecessors of the same name held (Leases.Reclaim); any other
// process with the name waits for the holder's presence to lapse, and gives up when the
// holder shows it is alive (its Refresh moves the until forward meanwhile).
type Instance struct {
	rdb    redis.UniversalClient
	key    string // the instances hash
	name   string
	id     string
	window time.Duration // presence window: how long a claim or refresh vouches for the holder
	ttl    time.Duration // lifetime of the hash
}

// NewInstance returns the hold of process id on member name in the instances hash key;
// window is how long after a claim or refresh the process is presumed present, ttl the
// lifetime of the hash (renewed by every claim and refresh).
func NewInstance(rdb redis.UniversalClient, key, name, id string, window, ttl time.Duration) *Instance {
	return &Instance{rdb: rdb, key: key, name: name, id: id, window: window, ttl: ttl}
}

// ID is the instance id of the process.
func (i *Instance) ID() string { return i.id }

// Window is the presence window.
func (i *Instance) Window() time.Duration { return i.window }

// Claim is the outcome of one claim of the name.
type Claim struct {
	// Taken: the name is this instance's now. How says from whom: "new" (nobody held it,
	// or the holder left), "mine" (this instance held it already), "gone" (the holder was
	// silent past its presence window).
	Taken bool
	How   string
	// When not taken: the holding instance, its state ("live": refreshing, "closing": a
	// graceful Close under way), the server ms until which it is presumed present, and how
	// long that is from now.
	Holder string
	State  string
	Until  int64
	Left   time.Duration
}

// Claim takes the name for this instance unless another instance holds it and is presumed
// present. A holder that refreshes moves its Until forward: a caller that sees it move (or
// the holder change) knows the name is in use by a live process.
func (i *Instance) Claim(ctx context.Context) (Claim, error) {
	res, err := claimScript.Run(ctx, i.rdb, []string{i.key}, i.name, i.id, i.window.Milliseconds(), i.ttl.Milliseconds()).Slice()
	if err != nil {
		return Claim{}, fmt.Errorf("claim member name %s in %s: %w", i.name, i.key, err)
	}
	return parseClaim(res)
}

func parseClaim(res []any) (Claim, error) {
	if len(res) == 2 {
		how, _ := res[1].(string)
		return Claim{Taken: true, How: how}, nil
	}
	if len(res) != 5 {
		return Claim{}, fmt.Errorf("claim member name: unexpected reply %v", res)
	}
	c := Claim{}
	c.State, _ = res[1].(string)
	c.Until, _ = res[2].(int64)
	left, _ := res[3].(int64)
	c.Left = time.Duration(left) * time.Millisecond
	c.Holder, _ = res[4].(string)
	return c, nil
}

// Refresh renews this instance's presence: its record reads present for one window from
// the server's clock now, so a process whose presence term runs one window from the
// sending of this request is gone before its record lapses. false (and no error) means the
// record reads closing (a Close of this instance is under way, and said how long to wait
// for it): nothing was renewed. ErrSuperseded means another instance holds the name.
func (i *Instance) Refresh(ctx context.Context) (bool, error) {
	n, err := refreshScript.Run(ctx, i.rdb, []string{i.key}, i.name, i.id, i.window.Milliseconds(), i.ttl.Milliseconds()).Int()
	switch {
	case err != nil:
		return false, fmt.Errorf("refresh presence of member %s in %s: %w", i.name, i.key, err)
	case n == 0:
		return false, fmt.Errorf("refresh presence of member %s in %s: %w", i.name, i.key, ErrSuperseded)
	}
	return n == 1, nil
}

// Closing records that this instance started a graceful Close that may take up to d: a
// successor waits for it that long (or until it left). false means another instance holds
// the name.
func (i *Instance) Closing(ctx context.Context, d time.Duration) (bool, error) {
	n, err := closingScript.Run(ctx, i.rdb, []string{i.key}, i.name, i.id, d.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("record closing of member %s in %s: %w", i.name, i.key, err)
	}
	return n == 1, nil
}
