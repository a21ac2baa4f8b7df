// Command dashboard mounts streamq's web dashboard in an HTTP server of its own, under
// /streamq/, read-only, next to the application's other handlers.
//
// It needs a Redis server (it shows what a real server holds): REDIS_URL, else
// localhost:6379. It reads only; it publishes and consumes nothing.
//
//	go run ./examples/dashboard      # then open http://127.0.0.1:8080/streamq/
//	ADDR=127.0.0.1:9000 REDIS_URL=redis://host:6379 go run ./examples/dashboard
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/streamq-dev/streamq/dashboard"
	"github.com/streamq-dev/streamq/examples/internal/exampleredis"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "dashboard:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client, err := exampleredis.ConnectServer(ctx, "the dashboard shows what a real server holds")
	if err != nil {
		return err
	}
	defer func() { _ = client.Close() }()
	h, err := dashboard.New(client, dashboard.Options{}) // read-only; AllowWrites enables replay, delete, reset
	if err != nil {
		return err
	}
	defer func() { _ = h.Close() }()
	mux := http.NewServeMux()
	mux.Handle("/streamq/", http.StripPrefix("/streamq", h))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	addr := os.Getenv("ADDR")
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	fmt.Printf("dashboard on http://%s/streamq/\n", addr)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
