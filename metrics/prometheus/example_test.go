package prometheus_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/metrics/prometheus"
)

// One Collector serves the Publisher and the Subscriber; its metrics are served with
// promhttp.
func ExampleNew() {
	metrics, err := prometheus.New(prometheus.Options{}) // prom.DefaultRegisterer
	if err != nil {
		panic(err)
	}
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	logger := watermill.NewStdLogger(false, false)
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, Metrics: metrics}, logger)
	if err != nil {
		panic(err)
	}
	defer pub.Close()
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{
		Client:        client,
		ConsumerGroup: "payments",
		Membership:    streamq.MembershipConfig{ConsumerName: "host-1"}, // a stable name keeps the consumer label's cardinality low
		Metrics:       metrics,
	}, logger)
	if err != nil {
		panic(err)
	}
	defer sub.Close()

	http.Handle("/metrics", promhttp.Handler())
	srv := &http.Server{Addr: ":2112", ReadHeaderTimeout: 10 * time.Second}
	_ = srv.ListenAndServe()
}

// A Collector on its own registry, with a namespace.
func ExampleNew_registry() {
	reg := prom.NewRegistry()
	metrics, err := prometheus.New(prometheus.Options{Namespace: "billing", Registerer: reg})
	if err != nil {
		panic(err)
	}
	metrics.Produced("invoices", 3)
	metrics.Produced("invoices", 3)

	n, _ := testutil.GatherAndCount(reg, "billing_produced_total")
	fmt.Println(n, "series")
	// Output: 1 series
}
