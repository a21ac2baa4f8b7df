//go:build soak

package soak

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"
)

// runRole runs the child role named by SOAK_ROLE and returns its exit code.
func runRole(role string) int {
	go exitWhenParentDies()
	env := readChildEnv()
	switch role {
	case "publisher":
		return runPublisher(env)
	case "consumer":
		return runConsumer(env)
	}
	fmt.Fprintf(os.Stderr, "unknown %s %q\n", envRole, role)
	return 2
}

// exitWhenParentDies exits when stdin, a pipe from TestSoak, reaches end of file: TestSoak
// is gone (the children also get SIGKILL then, through Pdeathsig).
func exitWhenParentDies() {
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(3)
}

// newClient is the Redis client of a child: short timeouts, so faults show up quickly.
func newClient(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr: addr, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
		PoolTimeout: 2 * time.Second, DisableIdentity: true,
	})
}

// logger writes the library's info and error logs to stderr (the process's log file) and
// records lease and heal events in the ledger (nil: none), matching the messages the
// subscription logs when it acquires, releases or loses a partition, or recreates its group.
type logger struct {
	led    *ledger
	fields watermill.LogFields
}

func newLogger(led *ledger) watermill.LoggerAdapter { return logger{led: led} }

func (l logger) Error(msg string, err error, fields watermill.LogFields) {
	switch {
	case l.led == nil:
	case msg == "Partition lease lost, stopped delivering from it":
		l.led.write(event{Ev: evLost, Part: partitionField(l.fields.Add(fields)), Err: fmt.Sprint(err)})
	case strings.HasPrefix(msg, healMessage):
		position, _ := fields["position"].(string)
		l.led.write(event{Ev: evHealed, Part: partitionField(l.fields.Add(fields)), ID: position})
	}
	l.print("ERROR", msg+": "+fmt.Sprint(err), fields)
}

// healMessage starts the line a member logs when it recreated its group on a partition.
const healMessage = "The consumer group was missing on the partition"

func (l logger) Info(msg string, fields watermill.LogFields) { l.print("INFO", msg, fields) }

func (l logger) Debug(msg string, fields watermill.LogFields) {
	if l.led == nil {
		return
	}
	switch msg {
	case "Partition acquired":
		l.led.write(event{Ev: evAcquired, Part: partitionField(l.fields.Add(fields))})
	case "Partition released":
		l.led.write(event{Ev: evReleased, Part: partitionField(l.fields.Add(fields))})
	}
}

func (l logger) Trace(string, watermill.LogFields) {}

func (l logger) With(fields watermill.LogFields) watermill.LoggerAdapter {
	return logger{led: l.led, fields: l.fields.Add(fields)}
}

func (l logger) print(level, msg string, fields watermill.LogFields) {
	fmt.Fprintf(os.Stderr, "%s %s %s %v\n", time.Now().Format("15:04:05.000"), level, msg, l.fields.Add(fields))
}

// partitionField is the partition of a log line: the library names it in the fields of the
// call or of the logger the line came from (a partition's components log through
// logger.With(partition)), as any Watermill logger adapter merges them.
func partitionField(fields watermill.LogFields) int {
	if p, ok := fields["partition"].(int); ok {
		return p
	}
	return -1
}
