package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sparkrig/sparkrig/internal/fabric"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// Record is one bench run as written to the results directory. It is a
// report.Report (every step is one analysis, so `sparkrig report` renders
// it) with the run's own details under "bench".
type Record struct {
	report.Report
	Bench RunDetails `json:"bench"`
}

// RunDetails is what only a bench run has: the plan, the facts it was made from,
// and every command with its raw output.
type RunDetails struct {
	ID          string        `json:"id"`
	Args        []string      `json:"args"`
	Started     time.Time     `json:"started"`
	Finished    time.Time     `json:"finished"`
	Interrupted bool          `json:"interrupted,omitempty"`
	Nodes       []NodeSummary `json:"nodes"`
	Plan        *Plan         `json:"plan"`
	// Missing lists tools a host lacks, with how to get them.
	Missing []report.MissingTool `json:"missing,omitempty"`
	Steps   []StepRecord         `json:"steps"`
}

// StepRecord is a step's commands and raw outputs with what was parsed.
type StepRecord struct {
	StepResult
	Parsed Parsed `json:"parsed"`
}

// NodeSummary is the part of a node's facts that explains a result.
type NodeSummary struct {
	Host        string   `json:"host"`
	Hostname    string   `json:"hostname,omitempty"`
	OS          string   `json:"os,omitempty"`
	Kernel      string   `json:"kernel,omitempty"`
	Arch        string   `json:"arch,omitempty"`
	DGX         string   `json:"dgx,omitempty"`
	GPUs        []string `json:"gpus"`
	GPUProcs    int      `json:"gpu_processes"`
	Driver      string   `json:"driver,omitempty"`
	CUDA        string   `json:"cuda,omitempty"`
	NCCL        string   `json:"nccl,omitempty"`
	MemTotal    uint64   `json:"mem_total_bytes,omitempty"`
	MemAvail    uint64   `json:"mem_available_bytes,omitempty"`
	ActiveRDMA  []string `json:"active_rdma"`
	DataNetDevs []string `json:"netdevs"`
}

// Summarise keeps what a reader of a bench result needs from the facts.
func Summarise(n *facts.Node) NodeSummary {
	s := NodeSummary{Host: n.Host, Hostname: n.Hostname, OS: n.OS.PrettyName, Kernel: n.OS.Kernel, Arch: n.OS.Arch,
		Driver: n.Driver.Version, CUDA: n.Driver.CUDAVersion, NCCL: n.NCCL.Version, GPUs: []string{}, ActiveRDMA: []string{}, DataNetDevs: []string{}}
	if n.DGX != nil {
		s.DGX = n.DGX.Name
	}
	if n.Memory.TotalBytes != nil {
		s.MemTotal = *n.Memory.TotalBytes
	}
	if n.Memory.AvailableBytes != nil {
		s.MemAvail = *n.Memory.AvailableBytes
	}
	for _, g := range n.GPUs {
		s.GPUs = append(s.GPUs, fmt.Sprintf("%d %s", g.Index, g.Name))
		s.GPUProcs += g.Processes
	}
	for _, d := range n.RDMA {
		if fabric.ActivePort(d) {
			s.ActiveRDMA = append(s.ActiveRDMA, d.Name)
		}
	}
	for _, nd := range n.NetDevs {
		var addrs []string
		for _, a := range nd.Addrs {
			if a.Family == "inet" {
				addrs = append(addrs, a.CIDR)
			}
		}
		if nd.Name != "lo" && len(addrs) > 0 {
			s.DataNetDevs = append(s.DataNetDevs, fmt.Sprintf("%s mtu %d %s", nd.Name, nd.MTU, strings.Join(addrs, ",")))
		}
	}
	return s
}

// RunID names a run by its start time and hosts: "20261122T031700Z-spark-1-spark-2".
func RunID(t time.Time, hosts []string) string {
	id := t.UTC().Format("20060102T150405Z")
	for _, h := range hosts {
		id += "-" + snapshot.SafeName(h)
	}
	if len(id) > 100 {
		id = id[:100]
	}
	return id
}

// Save writes the record as dir/bench-<id>.json and returns the path.
func Save(dir string, r *Record) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(dir, "bench-"+r.Bench.ID+".json")
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return "", err
	}
	return p, os.Rename(tmp, p)
}

// Load reads a record written by Save.
func Load(data []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("not a sparkrig bench result: %w", err)
	}
	if r.Tool != "sparkrig" || r.Command != "bench" || r.Bench.ID == "" {
		return nil, fmt.Errorf("not a sparkrig bench result (no bench run in it)")
	}
	return &r, nil
}
