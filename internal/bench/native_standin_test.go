package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sparkrig/sparkrig/internal/gpu"
	"github.com/sparkrig/sparkrig/internal/results"
)

// standinCollective stands in for `sparkrig bench gpu ... collective
// --nranks N --rank R --rendezvous HOST:PORT` on a GPU node. The ranks meet
// through the real rendezvous (gpu.ServeUniqueID and gpu.FetchUniqueID) on
// the planned port, over loopback since every stand-in host is this
// machine; then rank 0 replays the table two H200 processes printed for the
// asked collective and writes their JSON to --json-file, and the other
// ranks print nothing, as the real program does. SPARKRIG_STANDIN_PEER_FAIL
// makes the other ranks fail before the rendezvous, as on a node without a
// GPU driver.
func standinCollective(args []string, data string) int {
	op, jsonFile := flagValue(args, "--op"), flagValue(args, "--json-file")
	rank, _ := strconv.Atoi(flagValue(args, "--rank"))
	nranks, _ := strconv.Atoi(flagValue(args, "--nranks"))
	_, port, err := net.SplitHostPort(flagValue(args, "--rendezvous"))
	if err != nil || nranks < 2 {
		fmt.Fprintln(os.Stderr, "standin: not a multi-process collective:", args)
		return 3
	}
	addr := "127.0.0.1:" + port
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if rank != 0 {
		if os.Getenv("SPARKRIG_STANDIN_PEER_FAIL") != "" {
			fmt.Fprintln(os.Stderr, "sparkrig: bench gpu: no CUDA driver found")
			return 3
		}
		if _, err := gpu.FetchUniqueID(ctx, addr, rank, nranks, results.NCCLDevice{Rank: rank, Name: "NVIDIA H200"}); err != nil {
			fmt.Fprintln(os.Stderr, "standin:", err)
			return 3
		}
		return 0
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "standin: rendezvous:", err)
		return 3
	}
	defer ln.Close()
	if _, err := gpu.ServeUniqueID(ctx, ln, gpu.UniqueID{}, nranks); err != nil {
		fmt.Fprintln(os.Stderr, "standin:", err)
		return 3
	}
	text, err := recorded(filepath.Join(data, "gpu", "standin-sparkrig.2proc-rank0.h200x2.txt"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "standin:", err)
		return 2
	}
	fmt.Print(collectiveSection(text, op))
	if jsonFile != "" {
		if err := writeCollectiveJSON(filepath.Join(data, "gpu", "standin-sparkrig.2proc.h200x2.json"), op, jsonFile); err != nil {
			fmt.Fprintln(os.Stderr, "standin:", err)
			return 2
		}
	}
	return 0
}

// collectiveSection is the first line of a recorded run and the table of
// one collective.
func collectiveSection(text, op string) string {
	lines := strings.SplitAfter(text, "\n")
	out := lines[0]
	in := false
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "# Collective test starting: ") {
			in = strings.TrimSpace(strings.TrimPrefix(l, "# Collective test starting: ")) == op
		}
		if in {
			out += l
		}
	}
	return out
}

// writeCollectiveJSON writes the recorded tables of one collective to dst.
func writeCollectiveJSON(src, op, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var tables []json.RawMessage
	if err := json.Unmarshal(b, &tables); err != nil {
		return err
	}
	var keep []json.RawMessage
	for _, t := range tables {
		var head struct {
			Collective string `json:"collective"`
		}
		if json.Unmarshal(t, &head) == nil && head.Collective == op {
			keep = append(keep, t)
		}
	}
	out, err := json.Marshal(keep)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, out, 0o644)
}
