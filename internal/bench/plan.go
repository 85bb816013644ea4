package bench

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sparkrig/sparkrig/internal/facts"
)

// Benchmark kinds.
const (
	KindRDMA = "rdma"
	KindTCP  = "tcp"
	KindNCCL = "nccl"
)

// Roles of the commands of a step.
const (
	RoleServer   = "server"
	RoleClient   = "client"
	RoleLauncher = "launcher"
)

// Cmd is one process on one host.
type Cmd struct {
	Host string   `json:"host"`
	Role string   `json:"role"`
	Argv []string `json:"argv"`
	Env  []Var    `json:"env,omitempty"`
	// ListenPort is the TCP port a server listens on once it is ready; 0
	// when readiness cannot be seen (perftest over rdma_cm): the run then
	// gives the server a short fixed delay.
	ListenPort int `json:"listen_port,omitempty"`
	// Fetch lists files the command writes on its host (nccl-tests -J),
	// read back after it ends and removed.
	Fetch []string `json:"fetch,omitempty"`
	// Group makes a step's clients independent tests: a client that
	// fails stops the others of its group only, and the step waits for
	// every group. Empty, one failure ends the whole step.
	Group string `json:"group,omitempty"`
}

// Step is one measurement: its servers start first, then its clients; it
// ends when every client has exited, and then its servers are stopped.
type Step struct {
	ID      string        `json:"id"` // "rdma/rail0/ib_write_bw"
	Kind    string        `json:"kind"`
	Tool    string        `json:"tool"`
	Rails   []string      `json:"rails,omitempty"`
	Servers []Cmd         `json:"servers,omitempty"`
	Clients []Cmd         `json:"clients"`
	Timeout time.Duration `json:"timeout_ns"`
	// Collective is set for NCCL steps ("all_gather").
	Collective string `json:"collective,omitempty"`
	// MaxBytes is the largest message after the memory cap (NCCL steps).
	MaxBytes int64 `json:"max_bytes,omitempty"`
}

// Commands returns servers then clients.
func (s Step) Commands() []Cmd { return append(append([]Cmd{}, s.Servers...), s.Clients...) }

// Plan is everything a bench run will do, decided before anything runs.
type Plan struct {
	Hosts []string `json:"hosts"`
	Kinds []string `json:"kinds"`
	// Topology is the cabling as expectations name it ("two-nodes-one-cable").
	Topology string `json:"topology,omitempty"`
	Rails    []Rail `json:"rails"`
	NCCLEnv  []Var  `json:"nccl_env,omitempty"`
	Steps    []Step `json:"steps"`
	Notes    []Note `json:"notes"`
	// Refusals are reasons not to run at all (a GPU busy, memory short);
	// --force overrides the ones that allow it.
	Refusals []Refusal `json:"refusals,omitempty"`
	// MemFraction is the most of a node's free memory one test may take;
	// NCCL steps check it again when they start.
	MemFraction float64 `json:"mem_fraction,omitempty"`
}

// Options are what the user chose.
type Options struct {
	// AcceptNewHostKeys lets mpirun's ssh record unknown host keys, as
	// sparkrig's own SSH does with --accept-new-host-keys; without it both
	// refuse them.
	AcceptNewHostKeys bool
	Kinds             []string
	Tools             Tools
	Duration          time.Duration // each bandwidth test (default 10 s)
	Streams           int           // TCP streams per rail (default 4)
	QPs               int           // ib_write_bw -q (default 1)
	BasePort          int           // first TCP port servers listen on (default 18515)

	Collectives []string // nccl-tests collectives (default all_gather, all_reduce)
	MinBytes    int64    // nccl-tests -b (default 32 MiB)
	MaxBytes    int64    // nccl-tests -e before the memory cap (default 16 GiB)
	MemFraction float64  // most of a node's free memory a test may take (default 0.5)
	NCCLJSON    bool     // the nccl-tests build supports -J
	BootstrapIf string
	MPIHosts    []string // -H names for mpirun; default: rail addresses

	Native bool // TCP through sparkrig's probe instead of iperf3
	// QualifyRDMA qualifies RoCE rails with ib_write_bw (perftest is on
	// every node) instead of the TCP probe.
	QualifyRDMA bool
	// NativeNCCL, when nccl-tests is not used, is the sparkrig on the nodes
	// that runs the collectives itself (bench gpu collective): on one node in
	// one process, on several as one rank per node that meet over its TCP
	// rendezvous (BasePort+RendezvousPortOffset on the first node).
	NativeNCCL string
	ProbePath  string // the probe helper's path on the nodes
	RunDir     string // per-run scratch directory on the nodes
	// Links and Topology come from the cluster doctor (FromCluster); without
	// links, rails pair addresses by subnet and the topology is guessed.
	Links    []Link
	Topology string
	// Live is each node's state read just now (ReadLive), in node order;
	// nil plans from the facts alone.
	Live []Live
}

func (o *Options) defaults() {
	if o.Duration <= 0 {
		o.Duration = 10 * time.Second
	}
	if o.Streams <= 0 {
		o.Streams = 4
	}
	if o.QPs <= 0 {
		o.QPs = 1
	}
	if o.BasePort <= 0 {
		o.BasePort = DefaultBasePort
	}
	if len(o.Collectives) == 0 {
		o.Collectives = []string{"all_gather", "all_reduce"}
	}
	if o.MinBytes <= 0 {
		o.MinBytes = 32 << 20
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 16 << 30
	}
	if o.MemFraction <= 0 || o.MemFraction > 1 {
		o.MemFraction = 0.5
	}
	if o.RunDir == "" {
		o.RunDir = "/tmp/sparkrig-bench"
	}
	if o.ProbePath == "" {
		o.ProbePath = o.RunDir + "/sparkrig"
	}
}

// NewPlan decides every command of a run from the nodes' facts (in the
// order the user named the hosts).
func NewPlan(nodes []*facts.Node, o Options) (*Plan, error) {
	o.defaults()
	if len(nodes) == 0 {
		return nil, fmt.Errorf("no hosts")
	}
	p := &Plan{Kinds: o.Kinds, Topology: o.Topology, MemFraction: o.MemFraction}
	for _, n := range nodes {
		p.Hosts = append(p.Hosts, n.Host)
	}
	rails, notes := Rails(nodes, o.Links)
	p.Rails, p.Notes = dataRails(rails), notes
	if len(p.Rails) == 0 && len(o.Links) > 0 {
		rails, notes = Rails(nodes, nil)
		p.Rails, p.Notes = dataRails(rails), notes
	}
	if p.Topology == "" {
		p.Topology = topology(nodes, p.Rails)
	}
	p.Refusals = append(p.Refusals, gpuBusy(nodes, o.Live)...)
	for _, k := range o.Kinds {
		switch k {
		case KindRDMA:
			p.planRDMA(o)
		case KindTCP:
			p.planTCP(o)
		case KindQualify:
			p.planQualify(o)
		case KindNCCL:
			if bare := withoutGPU(nodes); len(bare) > 0 {
				p.note(Note{ID: "bench.no-gpu", Detail: "NCCL left out: " + strings.Join(bare, ", ") + " has no NVIDIA GPU (the doctor's no-gpu profile), and a collective needs one on every node",
					Fix: "run bench nccl on GPU nodes only (--hosts), or check the driver with sparkrig doctor"})
				continue
			}
			p.planNCCL(nodes, o)
		default:
			return nil, fmt.Errorf("unknown benchmark %q (want rdma, tcp, nccl or all)", k)
		}
	}
	return p, nil
}

// withoutGPU names the nodes whose facts show no NVIDIA GPU (and no driver).
func withoutGPU(nodes []*facts.Node) []string {
	var out []string
	for _, n := range nodes {
		if len(n.GPUs) == 0 && n.Driver.Version == "" {
			out = append(out, n.Host)
		}
	}
	return out
}

// dataRails keeps the rails with RDMA on both ends when there are any: the
// management network shares a subnet too, but is not what a bench measures.
func dataRails(rails []Rail) []Rail {
	var rdma []Rail
	for _, r := range rails {
		if r.A.RDMAReady() && r.B.RDMAReady() {
			rdma = append(rdma, r)
		}
	}
	if len(rdma) == 0 {
		return rails
	}
	for i := range rdma {
		rdma[i].Name = "rail" + strconv.Itoa(i)
	}
	return rdma
}

func (p *Plan) note(n Note) { p.Notes = append(p.Notes, n) }
