//go:build soak

package soak

import (
	"flag"
	"os"
	"strconv"
	"time"

	"github.com/streamq-dev/streamq"
)

// Flags of TestSoak (go test -tags soak ./soak -soak.duration=10m ...).
var (
	flagDuration   = flag.Duration("soak.duration", 2*time.Minute, "how long publishers publish while faults are injected")
	flagPublishers = flag.Int("soak.publishers", 2, "publisher processes")
	flagConsumers  = flag.Int("soak.consumers", 2, "consumer processes per consumer group (two groups)")
	flagRate       = flag.Int("soak.rate", 150, "messages per second of each publisher")
	flagSeed       = flag.Int64("soak.seed", 0, "seed of the fault schedule and the payloads (0: from the clock)")
	flagGap        = flag.Duration("soak.gap", 6*time.Second, "quiet time after each fault (shortened to fit every fault kind into -soak.duration)")
	flagDir        = flag.String("soak.dir", "", "where ledgers and logs go (default: a new temporary directory, kept when the soak fails)")
	flagKeep       = flag.Bool("soak.keep", false, "keep the ledgers and logs after a successful run")
)

// The topic and its readers.
const (
	topic      = "soak"
	partitions = 16
)

// groups are the two consumer groups; each reads every message.
var groups = []string{"alpha", "beta"}

// Subscriber timings: a short lease so takeovers are quick, and a SIGSTOP or network cut
// of leaseFault outlasts it by far.
const (
	leaseTTL      = 2 * time.Second
	renewInterval = 500 * time.Millisecond
	rebalance     = 300 * time.Millisecond
	closeTimeout  = 3 * time.Second
	leaseFault    = 2*leaseTTL + time.Second
)

// retryPolicy of the consumers: the first retry is appended at once (<= 50 ms), later ones
// wait in the group's retry set; after three retries a message is dead-lettered.
var retryPolicy = streamq.ExponentialBackoff{Base: 30 * time.Millisecond, Max: 500 * time.Millisecond, Attempts: 3}

// offloadThreshold is the Publisher's default Payloads.Threshold (64 KiB).
const offloadThreshold = 64 * 1024

// Payload sizes: most are small; largePercent % are above the 64 KiB offload threshold.
const (
	smallMin, smallMax = 64, 2048
	largeMin, largeMax = offloadThreshold + 1, 96 * 1024
	largePercent       = 3
)

// Environment of a child process: SOAK_ROLE picks the role, the others configure it.
const (
	envRole   = "SOAK_ROLE" // "publisher" or "consumer"
	envAddr   = "SOAK_ADDR" // Redis address, through the process's proxy
	envLedger = "SOAK_LEDGER"
	envName   = "SOAK_NAME" // publisher id or consumer member name
	envGroup  = "SOAK_GROUP"
	envRate   = "SOAK_RATE"
	envSeed   = "SOAK_SEED"
)

// childEnv reads the configuration of a child process.
type childEnv struct {
	addr, ledger, name, group string
	rate                      int
	seed                      int64
}

func readChildEnv() childEnv {
	rate, _ := strconv.Atoi(os.Getenv(envRate))
	seed, _ := strconv.ParseInt(os.Getenv(envSeed), 10, 64)
	return childEnv{
		addr: os.Getenv(envAddr), ledger: os.Getenv(envLedger), name: os.Getenv(envName),
		group: os.Getenv(envGroup), rate: rate, seed: seed,
	}
}
