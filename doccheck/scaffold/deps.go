package scaffold

// Every package of doccheck's import table (doccheck.Imports), so that `go mod tidy` keeps
// their modules in doccheck/go.mod and `go list -export -deps ./scaffold` builds them all.
import (
	// The standard library's.
	_ "bytes"
	_ "context"
	_ "encoding/json"
	_ "errors"
	_ "fmt"
	_ "io"
	_ "log"
	_ "log/slog"
	_ "net/http"
	_ "os"
	_ "os/signal"
	_ "strconv"
	_ "strings"
	_ "sync"
	_ "syscall"
	_ "time"

	// The modules', each required by doccheck/go.mod.
	_ "github.com/ThreeDotsLabs/watermill"
	_ "github.com/ThreeDotsLabs/watermill-redisstream/pkg/redisstream"
	_ "github.com/ThreeDotsLabs/watermill/components/delay"
	_ "github.com/ThreeDotsLabs/watermill/message"
	_ "github.com/ThreeDotsLabs/watermill/message/router/middleware"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/redis/go-redis/v9"
	_ "github.com/streamq-dev/streamq"
	_ "github.com/streamq-dev/streamq/admin"
	_ "github.com/streamq-dev/streamq/dashboard"
	_ "github.com/streamq-dev/streamq/metrics/prometheus"
	_ "github.com/streamq-dev/streamq/otel"
	_ "go.opentelemetry.io/otel"
	_ "go.opentelemetry.io/otel/sdk/trace"
	_ "go.opentelemetry.io/otel/trace"
)
