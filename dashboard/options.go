package dashboard

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
)

// Defaults of Options.
const (
	// DefaultRefreshInterval is how often the pages poll the API.
	DefaultRefreshInterval = 2 * time.Second
	// DefaultSampleInterval is how often the sampler reads a viewed topic's counters.
	DefaultSampleInterval = 2 * time.Second
	// DefaultSampleWindow is how much history the charts show.
	DefaultSampleWindow = time.Hour
	// DefaultHistoryInterval is how often the sampler records every topic's history.
	DefaultHistoryInterval = admin.DefaultHistoryInterval
	// DefaultHistoryRetention is how long the recorded history is kept.
	DefaultHistoryRetention = admin.DefaultHistoryRetention
	// DefaultPreviewBytes is how many bytes of a payload the lists show.
	DefaultPreviewBytes = 1024
)

// ErrInvalidOptions reports Options that New refuses.
var ErrInvalidOptions = errors.New("invalid dashboard options")

// Options configures a Handler. Zero values mean the defaults.
type Options struct {
	// AllowWrites enables the write endpoints: replay, delete and clear dead letters, reset a
	// group's offset. Optional; default false: read-only, the pages hide every write control
	// and the API refuses writes with 403.
	AllowWrites bool
	// Token, when set, must be sent as "Authorization: Bearer <Token>" with every API request
	// (the page asks for it once and keeps it in the tab's session storage). Optional; default
	// none. Not together with BasicAuthUser.
	Token string
	// BasicAuthUser and BasicAuthPassword, when set, are required as HTTP basic credentials on
	// every request (the browser asks for them). Optional; default none; both or neither.
	BasicAuthUser, BasicAuthPassword string
	// AllowedHosts, when not empty, lists the Host headers the handler answers ("127.0.0.1:8080",
	// or a name without port for any port); others get 403. It protects a dashboard on a
	// loopback address from DNS rebinding. Optional; default any host.
	AllowedHosts []string
	// BasePath is the path the handler is mounted at when it is not behind http.StripPrefix,
	// e.g. "/streamq/". Optional; default "/".
	BasePath string
	// Keyspace must match the Publishers' and Subscribers'. Optional; default the library's
	// ("stream:topic", "streaming:mq").
	Keyspace streamq.Keyspace
	// Payloads must match the Publishers' Payloads: a dead letter replayed from the page with
	// a payload over the threshold has it stored in its own key again, with that TTL.
	// Optional; defaults 64 KiB (-1: replay inline) and 0 (no TTL).
	Payloads streamq.PayloadConfig
	// Logger receives one line per write (action, target, remote address, user, outcome;
	// never a secret) and the sampler's errors. Optional; default watermill.NopLogger.
	Logger watermill.LoggerAdapter
	// RefreshInterval is how often the pages poll. Optional; default 2s.
	RefreshInterval time.Duration
	// SampleInterval is how often the sampler records the history of the topics being
	// viewed (while a page shows them, and for 2 minutes after). Optional; default 2s.
	SampleInterval time.Duration
	// SampleWindow is how much history the charts show. Optional; default 1h; at most
	// HistoryRetention.
	SampleWindow time.Duration
	// HistoryInterval is how often the sampler records the history of every topic, viewed or
	// not, so a chart opened in an incident shows the hour before (admin.RecordHistory: a
	// bounded stream per topic in Redis, shared by every process that records it). Optional;
	// default 10s; -1: off (only the topics being viewed are recorded).
	HistoryInterval time.Duration
	// HistoryRetention is how long recorded samples are kept. Optional; default 90m; at
	// most admin.MaxHistorySamples samples are kept whatever it is.
	HistoryRetention time.Duration
	// PreviewBytes is how many bytes of a payload the lists show before truncating. Optional;
	// default 1024.
	PreviewBytes int
}

func (o *Options) setDefaults() {
	if o.Logger == nil {
		o.Logger = watermill.NopLogger{}
	}
	if o.BasePath == "" {
		o.BasePath = "/"
	}
	if o.RefreshInterval == 0 {
		o.RefreshInterval = DefaultRefreshInterval
	}
	if o.SampleInterval == 0 {
		o.SampleInterval = DefaultSampleInterval
	}
	if o.SampleWindow == 0 {
		o.SampleWindow = DefaultSampleWindow
	}
	if o.HistoryInterval == 0 {
		o.HistoryInterval = DefaultHistoryInterval
	}
	if o.HistoryRetention == 0 {
		o.HistoryRetention = max(DefaultHistoryRetention, o.SampleWindow)
	}
	if o.PreviewBytes == 0 {
		o.PreviewBytes = DefaultPreviewBytes
	}
}

// Validate reports the first problem of o (after defaults), wrapping ErrInvalidOptions.
func (o Options) Validate() error {
	if err := o.validateAuth(); err != nil {
		return err
	}
	switch {
	case !strings.HasPrefix(o.BasePath, "/") || !strings.HasSuffix(o.BasePath, "/"):
		return fmt.Errorf("%w: BasePath %q must start and end with /", ErrInvalidOptions, o.BasePath)
	case o.RefreshInterval < 0 || o.SampleInterval < 0 || o.SampleWindow < 0 || o.HistoryRetention < 0:
		return fmt.Errorf("%w: negative interval", ErrInvalidOptions)
	case o.HistoryInterval < 0 && o.HistoryInterval != -1:
		return fmt.Errorf("%w: HistoryInterval %s: want > 0, 0 (default) or -1 (off)", ErrInvalidOptions, o.HistoryInterval)
	case o.SampleWindow < o.SampleInterval:
		return fmt.Errorf("%w: SampleWindow %s shorter than SampleInterval %s", ErrInvalidOptions, o.SampleWindow, o.SampleInterval)
	case o.HistoryRetention < o.SampleWindow:
		return fmt.Errorf("%w: HistoryRetention %s shorter than SampleWindow %s", ErrInvalidOptions, o.HistoryRetention, o.SampleWindow)
	case o.PreviewBytes < 0:
		return fmt.Errorf("%w: PreviewBytes %d is negative", ErrInvalidOptions, o.PreviewBytes)
	case o.Payloads.Threshold < -1 || o.Payloads.TTL < 0:
		return fmt.Errorf("%w: Payloads.Threshold %d must be > 0, 0 or -1 and Payloads.TTL %s not negative",
			ErrInvalidOptions, o.Payloads.Threshold, o.Payloads.TTL)
	}
	return nil
}

func (o Options) validateAuth() error {
	basic := o.BasicAuthUser != "" || o.BasicAuthPassword != ""
	switch {
	case basic && o.Token != "":
		return fmt.Errorf("%w: Token and basic auth are exclusive; set one", ErrInvalidOptions)
	case basic && (o.BasicAuthUser == "" || o.BasicAuthPassword == ""):
		return fmt.Errorf("%w: basic auth needs both BasicAuthUser and BasicAuthPassword", ErrInvalidOptions)
	case strings.Contains(o.BasicAuthUser, ":"):
		return fmt.Errorf("%w: BasicAuthUser must not contain ':'", ErrInvalidOptions)
	}
	return nil
}

// authMode names the configured authentication: "none", "token" or "basic".
func (o Options) authMode() string {
	switch {
	case o.Token != "":
		return authToken
	case o.BasicAuthUser != "":
		return authBasic
	}
	return authNone
}
