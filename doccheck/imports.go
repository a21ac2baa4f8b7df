package doccheck

// Imports is the package name → import path table of the names Go blocks use without
// importing them. A block's own imports win over it: a name the block imports is not taken
// from here. Every path here is imported by scaffold/deps.go, so that `go mod tidy` keeps
// its module in go.mod (TestImportsAreModuleDependencies).
var Imports = map[string]string{
	// The standard library.
	"bytes":   "bytes",
	"context": "context",
	"errors":  "errors",
	"fmt":     "fmt",
	"http":    "net/http",
	"io":      "io",
	"json":    "encoding/json",
	"log":     "log",
	"os":      "os",
	"signal":  "os/signal",
	"slog":    "log/slog",
	"strconv": "strconv",
	"strings": "strings",
	"sync":    "sync",
	"syscall": "syscall",
	"time":    "time",

	// streamq and its modules.
	"streamq":     "github.com/streamq-dev/streamq",
	"admin":       "github.com/streamq-dev/streamq/admin",
	"dashboard":   "github.com/streamq-dev/streamq/dashboard",
	"prometheus":  "github.com/streamq-dev/streamq/metrics/prometheus",
	"streamqotel": "github.com/streamq-dev/streamq/otel",

	// Watermill and Redis.
	"watermill":   "github.com/ThreeDotsLabs/watermill",
	"message":     "github.com/ThreeDotsLabs/watermill/message",
	"middleware":  "github.com/ThreeDotsLabs/watermill/message/router/middleware",
	"delay":       "github.com/ThreeDotsLabs/watermill/components/delay",
	"redisstream": "github.com/ThreeDotsLabs/watermill-redisstream/pkg/redisstream",
	"redis":       "github.com/redis/go-redis/v9",

	// Prometheus and OpenTelemetry.
	"promclient": "github.com/prometheus/client_golang/prometheus",
	"promhttp":   "github.com/prometheus/client_golang/prometheus/promhttp",
	"otel":       "go.opentelemetry.io/otel",
	"sdktrace":   "go.opentelemetry.io/otel/sdk/trace",
	"trace":      "go.opentelemetry.io/otel/trace",
	// voi-oss/watermill-opentelemetry's pkg/opentelemetry, by a stand-in with its API (the
	// module proxy does not serve it).
}
