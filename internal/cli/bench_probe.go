package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/bench/probe"
)

// newProbeServerCmd is the hidden helper `bench tcp --native` starts on the
// node that receives: it answers one client and exits.
func newProbeServerCmd(env *Env) *cobra.Command {
	var listen string
	var cfg probe.ServerConfig
	cmd := &cobra.Command{
		Use:    "probe-server --listen ADDR:PORT",
		Short:  "serve sparkrig's TCP probe (started by bench tcp --native)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := net.Listen("tcp", listen)
			if err != nil {
				return exitf(ExitUnknown, "probe-server: %v", err)
			}
			fmt.Fprintf(env.Stdout, "sparkrig probe listening on %s\n", l.Addr())
			// told to stop (TERM from bench's wrapper): stop listening at once
			stop := context.AfterFunc(cmd.Context(), func() { l.Close() })
			defer stop()
			if err := probe.Serve(l, cfg); err != nil {
				if cmd.Context().Err() != nil {
					return nil
				}
				return exitf(ExitUnknown, "probe-server: %v", err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", ":18615", "address and port to listen on")
	f.BoolVar(&cfg.Once, "once", false, "exit after the first client is done")
	f.DurationVar(&cfg.Idle, "idle", 60*time.Second, "exit when no client comes for this long")
	return cmd
}

// newProbeClientCmd is the hidden helper that sends: it prints one JSON result.
func newProbeClientCmd(env *Env) *cobra.Command {
	cfg := probe.ClientConfig{Quit: true}
	cmd := &cobra.Command{
		Use:    "probe-client --connect ADDR:PORT",
		Short:  "measure TCP throughput and round trips against a probe server",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := probe.Run(cfg)
			if err != nil {
				return exitf(ExitUnknown, "probe-client: %v", err)
			}
			enc := json.NewEncoder(env.Stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(res)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Addr, "connect", "", "probe server address:port")
	f.StringVar(&cfg.Bind, "bind", "", "local address to send from")
	f.IntVar(&cfg.Streams, "streams", 4, "parallel TCP streams")
	f.DurationVar(&cfg.Duration, "duration", 10*time.Second, "length of the throughput test")
	f.IntVar(&cfg.Pings, "pings", 1000, "round trips timed")
	return cmd
}
