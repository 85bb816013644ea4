// Package diagnose names the known causes that fit a benchmark result below
// its expectation. Each cause has a signature (the ratio to the expectation,
// the shape of the size sweep, what NCCL logged) and reports the evidence in
// the input that supports it or rules it out, and how to confirm it.
package diagnose

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// Input is one judged result and what else the file said.
type Input struct {
	Platform string
	Topology string
	// Measure is an expect measure name (nccl-busbw, rdma-bw, rdma-lat, tcp-bw...).
	Measure string
	// Ratio is measured/expected, for lower-is-better measures too (a slow
	// latency is above 1); 0 when nothing was compared.
	Ratio    float64
	Verdict  report.Verdict
	Table    *results.NCCLTable
	Log      *results.NCCLLog
	Perftest *results.PerftestRun
	// NCCLMin is the NCCL version the platform needs ("" if none).
	NCCLMin string
}

type scored struct {
	report.Cause
	score float64
}

type cause struct {
	id, title, confirm, fix, source string
	eval                            func(in Input, c *scored)
}

// Causes returns the causes that fit, most likely first, then those the
// evidence rules out. For a result that met its expectation only the causes
// that do not depend on the gap (wrong results, a collapse at one size) remain.
func Causes(in Input) []report.Cause {
	var out []scored
	for _, k := range catalogue {
		// told before the evaluation, which only reads its input: a
		// report of many results that met theirs (a long log of many
		// tables) evaluates two causes each, not every one
		if in.Verdict == report.VerdictOK && k.id != "wrong-results" && k.id != "size-collapse" {
			continue
		}
		c := scored{Cause: report.Cause{ID: k.id, Title: k.title, Confirm: k.confirm, Fix: k.fix, Source: k.source}}
		k.eval(in, &c)
		if c.score <= 0 && len(c.Against) == 0 {
			continue
		}
		c.Likelihood = likelihood(c.score)
		out = append(out, c)
	}
	return ranked(out)
}

// likelihood grades a cause's score: 0.6 or more likely, above 0
// possible, ruled out below.
func likelihood(score float64) string {
	switch {
	case score >= 0.6:
		return "likely"
	case score > 0:
		return "possible"
	default:
		return "ruled-out"
	}
}

// ranked orders the scored causes, highest score first (ties keep the
// catalogue's order).
func ranked(out []scored) []report.Cause {
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	causes := make([]report.Cause, len(out))
	for i, c := range out {
		causes[i] = c.Cause
	}
	return causes
}

func (c *scored) for_(w float64, format string, a ...any) {
	c.score += w
	c.Evidence = append(c.Evidence, fmt.Sprintf(format, a...))
}

func (c *scored) against(format string, a ...any) {
	c.score = -1
	c.Against = append(c.Against, fmt.Sprintf(format, a...))
}

func near(r, lo, hi float64) bool { return r >= lo && r <= hi }

func pct(r float64) string { return fmt.Sprintf("%.0f %%", r*100) }

func multiNode(in Input) bool {
	return in.Topology != "" && in.Topology != "single-node" || in.Table != nil && in.Table.Nodes > 1
}

var catalogue = []cause{
	{
		id:      "wrong-results",
		title:   "wrong results: failing hardware or a bad build",
		confirm: "rerun with -c 1 between each pair of nodes to find the culprit; look for Xid errors in `dmesg`; rebuild nccl-tests against the NCCL library in use",
		fix:     "replace or reseat the failing GPU/NIC/cable; rebuild NCCL and nccl-tests for this GPU (sm_121 on GB10)",
		source:  "nccl-tests #wrong and 'Out of bounds values' columns",
		eval: func(in Input, c *scored) {
			if t := in.Table; t != nil {
				if t.WrongResults > 0 {
					c.for_(1, "#wrong reports %d wrong elements", t.WrongResults)
				}
				if t.OutOfBounds != nil && *t.OutOfBounds > 0 {
					c.for_(1, "footer reports %d out-of-bounds values", *t.OutOfBounds)
				}
			}
		},
	},
	{
		id:      "net-socket",
		title:   "NCCL fell back to NET/Socket (TCP) instead of NET/IB (RDMA): about 1/10 of the bandwidth",
		confirm: "rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET and look for 'Using network IB' and 'via NET/IB/n'; `ibv_devices` must list the RoCE devices inside the job (containers need /dev/infiniband)",
		fix:     "make the RDMA devices visible to the job and name them in NCCL_IB_HCA; keep NCCL_SOCKET_IFNAME for bootstrap only",
		source:  "docs/dgx-spark.md pitfall 13; seed 001 (\"If NET/Socket appears instead of NET/IB, NCCL is falling back to TCP\")",
		eval: func(in Input, c *scored) {
			if in.Measure != "nccl-busbw" {
				return
			}
			l := in.Log
			if l != nil && l.InfoLines > 0 {
				kinds, _ := l.TransportKinds()
				if one, why := l.SingleNode(); one {
					c.against("all ranks run on one node (%s): no network carries the collective's data", why)
					return
				}
				switch {
				case l.Network == "Socket" || kinds["NET/Socket"] > 0:
					c.for_(0.8, "the log says %s", socketEvidence(l, kinds))
					if v, ok := l.Env["NCCL_IB_DISABLE"]; ok && strings.TrimSpace(v) == "1" {
						c.Evidence = append(c.Evidence, "and why: NCCL_IB_DISABLE=1 in the environment turned the RDMA transport off")
					}
					for _, n := range l.NetNotes {
						if strings.Contains(n, "No device found") {
							c.Evidence = append(c.Evidence, "and why: \""+n+"\" (no RDMA device visible to the job)")
						}
					}
				case l.RDMA():
					c.against("the log shows NET/IB in use (%s)", ibEvidence(l))
					return
				}
			}
			if in.Ratio > 0 && in.Ratio <= 0.2 && multiNode(in) {
				w := 0.3
				if l == nil || l.InfoLines == 0 {
					c.for_(w, "busbw is %s of expected, the ~1/10 signature (no NCCL INFO lines in the file to confirm)", pct(in.Ratio))
				} else {
					c.for_(w, "busbw is %s of expected, the ~1/10 signature", pct(in.Ratio))
				}
			}
		},
	},
	{
		id:      "one-twin-unused",
		title:   "only one PCIe twin of the ConnectX-7 port carries traffic: about half the bandwidth",
		confirm: "`ibdev2netdev` on both nodes: both twins of the cabled port Up; `ip -br addr`: both twins addressed, on different subnets; NCCL_DEBUG=INFO must show 'NET/IB : Using [0]rocep1s0f1:1/RoCE [1]roceP2p1s0f1:1/RoCE' and channels via NET/IB/0 and NET/IB/1",
		fix:     "address both twins of the port (different /24s, netplan /etc/netplan/40-cx7.yaml) and set NCCL_IB_HCA to both, in the same order on every node (`sparkrig fix` writes it)",
		source:  "docs/dgx-spark.md pitfall 1; community: one twin 98 Gb/s vs both twins + NCCL_IB_MERGE_NICS=1 161 Gb/s busbw",
		eval: func(in Input, c *scored) {
			if in.Platform != "dgx-spark" || !multiNode(in) {
				return
			}
			if p := in.Perftest; p != nil {
				return // one ib_*_bw run measures one device by design
			}
			if l := in.Log; l != nil && l.InfoLines > 0 {
				used := l.NetDevicesUsed()
				if len(l.IBDevices) >= 2 && len(used) >= 2 {
					c.against("NCCL uses %d RoCE devices (%s) and channels run on NET/IB/%s", len(l.IBDevices), deviceNames(l), joinInts(used, ", NET/IB/"))
					return
				}
				if len(l.IBDevices) == 1 {
					c.for_(0.5, "NCCL lists a single RoCE device: %s", deviceNames(l))
				} else if len(used) == 1 {
					c.for_(0.4, "all channels run on NET/IB/%d", used[0])
				}
			}
			if near(in.Ratio, 0.35, 0.65) {
				c.for_(0.4, "result is %s of expected, the ~1/2 signature", pct(in.Ratio))
			}
		},
	},
	{
		id:      "link-100g",
		title:   "the link runs at 100 Gb/s instead of 200 Gb/s (switch auto-negotiation or cable)",
		confirm: "`ethtool <netdev> | grep Speed` on every CX-7 netdev must say 200000Mb/s; on a switch, check the port's negotiated speed",
		fix:     "force 200G on the switch port (auto-negotiation may land at 100G) or replace the cable",
		source:  "docs/dgx-spark.md pitfall 4",
		eval: func(in Input, c *scored) {
			if !multiNode(in) || in.Measure == "rdma-lat" || in.Measure == "tcp-bw" {
				return
			}
			if l := in.Log; l != nil {
				for _, d := range l.IBDevices {
					switch {
					case d.SpeedMbps == 100000:
						c.for_(0.6, "NCCL reports %s at speed=100000 (100 Gb/s)", d.Name)
					case d.SpeedMbps >= 200000:
						c.against("NCCL reports %s at speed=%d Mb/s", d.Name, d.SpeedMbps)
						return
					}
				}
			}
			if near(in.Ratio, 0.35, 0.65) {
				c.for_(0.3, "result is %s of expected, the ~1/2 signature", pct(in.Ratio))
				if in.Topology == "switch" {
					c.for_(0.1, "the nodes go through a switch, where 100G auto-negotiation is common")
				}
			}
		},
	},
	{
		id:      "mtu-1500",
		title:   "MTU 1500 on the RoCE netdevs: ~5 % short at large sizes",
		confirm: "`ip link show <netdev>` must say mtu 9000 on every CX-7 netdev, both ends, both twins; `ibv_devinfo` active_mtu should be 4096",
		fix:     "set mtu: 9000 for the CX-7 netdevs in /etc/netplan/40-cx7.yaml on both nodes and `netplan apply` (a switch needs MTU >= the hosts')",
		source:  "community: all_gather 16 GiB 18.94/20.95 GB/s before MTU 9000 (NVIDIA/dgx-spark-playbooks issue #25); docs/dgx-spark.md pitfall 5",
		eval: func(in Input, c *scored) {
			if !multiNode(in) || in.Measure == "rdma-lat" {
				return
			}
			mtu := pathMTU(in)
			switch {
			case mtu > 0 && mtu < 4096:
				c.for_(0.4, "the RoCE path MTU is %d B: the netdev MTU is below 4200 (with MTU 9000 it would be 4096)", mtu)
			case mtu >= 4096:
				c.against("the RoCE path MTU is %d B", mtu)
				return
			}
			if near(in.Ratio, 0.85, 0.995) {
				c.for_(0.35, "result is %s of expected, the ~5 %% MTU signature", pct(in.Ratio))
			}
			if t := in.Table; t != nil && c.score > 0 {
				if gap := placementGap(t); gap > 0.05 {
					c.Evidence = append(c.Evidence, fmt.Sprintf("out-of-place is %.0f %% below in-place at the largest size", gap*100))
				}
			}
		},
	},
	{
		id:      "size-collapse",
		title:   "bandwidth collapses at one message size: memory pressure or interference during that step",
		confirm: "rerun that size alone (-b SIZE -e SIZE) with `free -g` checked first; watch /proc/meminfo MemAvailable during the run",
		fix:     "free memory before large runs (on DGX Spark: stop model servers and the desktop session, drop caches); size -e from free memory: all_gather -b 16G needs ~32 GB",
		source:  "docs/dgx-spark.md pitfall 8 (all_gather -b 16G needs ~32 GB of unified memory)",
		eval: func(in Input, c *scored) {
			if t := in.Table; t != nil {
				if s := collapse(t); s != "" {
					c.for_(0.6, "%s", s)
				}
			}
		},
	},
	{
		id:      "nccl-build",
		title:   "the NCCL build is too old or not a release build for this GPU",
		confirm: "check 'NCCL version' in an NCCL_DEBUG=INFO run on every node; NVIDIA's DGX Spark NCCL playbook builds v" + expect.SparkNCCL + "-1 with -gencode=arch=compute_121,code=sm_121",
		fix:     "install an NCCL release >= 2.28.3 (on DGX Spark v" + expect.SparkNCCL + "-1, the release NVIDIA's DGX Spark NCCL playbook builds) and rebuild nccl-tests against it",
		source:  "seed 000 (NCCL >= 2.28.3); NVIDIA dgx-spark-playbooks nvidia/nccl/README.md; community: development-branch build 3.04 GB/s vs release v2.28.9-1 23.74 GB/s",
		eval: func(in Input, c *scored) {
			if in.Measure != "nccl-busbw" {
				return
			}
			v := ""
			if in.Table != nil {
				v = in.Table.NCCLVersion
			}
			if v == "" && in.Log != nil {
				v = in.Log.Version
			}
			if in.NCCLMin != "" && v != "" {
				if !expect.VersionAtLeast(v, in.NCCLMin) {
					c.for_(0.5, "NCCL %s is older than the required %s", v, in.NCCLMin)
				} else if in.Ratio == 0 || in.Ratio > 0.2 {
					c.against("NCCL %s meets the required %s", v, in.NCCLMin)
					return
				}
			}
			if in.Ratio > 0.05 && in.Ratio <= 0.2 && in.Log != nil && in.Log.Network == "IB" {
				c.for_(0.4, "NET/IB is in use yet busbw is %s of expected, the ~1/10 signature of a development-branch build", pct(in.Ratio))
			}
		},
	},
	{
		id:      "p2p-disabled",
		title:   "GPU peer-to-peer (or shared memory) is disabled or refused inside the node",
		confirm: "`env | grep NCCL_` for NCCL_P2P_DISABLE/NCCL_SHM_DISABLE; NCCL_DEBUG=INFO shows 'via P2P/...' for intra-node channels when P2P works; `nvidia-smi topo -m`",
		fix:     "unset NCCL_P2P_DISABLE and NCCL_SHM_DISABLE; enable IOMMU passthrough / ACS off where P2P is refused",
		source:  "seed 004 (NCCL_P2P_DISABLE=1 / NCCL_SHM_DISABLE=1 make intra-node traffic slow)",
		eval: func(in Input, c *scored) {
			l := in.Log
			if l == nil {
				return
			}
			if v := l.Env["NCCL_P2P_DISABLE"]; v == "1" {
				c.for_(0.8, "NCCL_P2P_DISABLE=1 is set")
			}
			if v := l.Env["NCCL_SHM_DISABLE"]; v == "1" {
				c.for_(0.5, "NCCL_SHM_DISABLE=1 is set")
			}
			if l.P2PRefused > 0 {
				c.for_(0.5, "NCCL logged 'Could not enable P2P' %d times", l.P2PRefused)
			}
		},
	},
	{
		id:      "tcp-path",
		title:   "latency of a kernel TCP path (50-200 us) instead of RDMA (1-2 us)",
		confirm: "rerun ib_write_lat on the RoCE device named by `ibdev2netdev` (not a software rxe device); an NCCL run must show NET/IB",
		fix:     "use the ConnectX-7 RoCE device and its GID index 3 (RoCEv2/IPv4)",
		source:  "seed 001 (RDMA 1-2 us vs standard Ethernet 50-200 us)",
		eval: func(in Input, c *scored) {
			if p := in.Perftest; p != nil && p.Kind == "lat" {
				for _, r := range p.Lat {
					if r.AvgUS != nil && *r.AvgUS >= 20 {
						c.for_(0.7, "t_avg is %.2f us", *r.AvgUS)
						break
					}
					if r.AvgUS != nil {
						c.against("t_avg is %.2f us, an RDMA latency", *r.AvgUS)
						break
					}
				}
				if strings.HasPrefix(p.Device, "rxe") {
					c.for_(0.3, "device %s is software RoCE", p.Device)
				}
			}
		},
	},
}

func socketEvidence(l *results.NCCLLog, kinds map[string]int64) string {
	var parts []string
	if l.Network != "" {
		parts = append(parts, "'Using network "+l.Network+"'")
	}
	if n := kinds["NET/Socket"]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d channel connections via NET/Socket", n))
	}
	return strings.Join(parts, " and ")
}

func ibEvidence(l *results.NCCLLog) string {
	if n := deviceNames(l); n != "" {
		return n
	}
	return "'Using network IB'"
}

func deviceNames(l *results.NCCLLog) string {
	var names []string
	for _, d := range l.IBDevices {
		names = append(names, d.Name)
	}
	return strings.Join(names, ", ")
}

func joinInts(v []int, sep string) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, sep)
}

// pathMTU is the RoCE path MTU the input shows: perftest's "Mtu" or the
// "mtu n" of NCCL's QP lines (the smallest seen); 0 when unknown.
func pathMTU(in Input) int {
	mtu := 0
	if p := in.Perftest; p != nil {
		mtu = p.MTU
	}
	if l := in.Log; l != nil {
		for _, g := range l.GIDs {
			if g.MTU > 0 && (mtu == 0 || g.MTU < mtu) {
				mtu = g.MTU
			}
		}
	}
	return mtu
}

// placementGap is how far out-of-place busbw falls below in-place at the
// largest size, as a fraction (0 when not below).
func placementGap(t *results.NCCLTable) float64 {
	if len(t.Rows) == 0 {
		return 0
	}
	r := t.Rows[len(t.Rows)-1]
	if r.OOP.BusBWGBs == nil || r.IP.BusBWGBs == nil || *r.IP.BusBWGBs <= 0 {
		return 0
	}
	return 1 - *r.OOP.BusBWGBs / *r.IP.BusBWGBs
}

// collapse finds a size (>= 1 MiB) whose busbw, in either placement, falls
// below 80 % of the same placement at the sizes around it.
func collapse(t *results.NCCLTable) string {
	get := func(r results.NCCLRow, ip bool) float64 {
		p := r.OOP.BusBWGBs
		if ip {
			p = r.IP.BusBWGBs
		}
		if p == nil {
			return 0
		}
		return *p
	}
	rows := t.Rows
	for i := 1; i < len(rows); i++ {
		for _, ip := range []bool{false, true} {
			v, prev := get(rows[i], ip), get(rows[i-1], ip)
			if rows[i].SizeBytes < 1<<20 || prev <= 0 || v <= 0 || v >= 0.8*prev {
				continue
			}
			next := 0.0
			if i+1 < len(rows) {
				next = get(rows[i+1], ip)
			}
			if i+1 < len(rows) && next < 0.8*prev {
				continue // a lasting drop, not a collapse at one size
			}
			where := "out-of-place"
			if ip {
				where = "in-place"
			}
			if next > 0 {
				return fmt.Sprintf("%s busbw drops to %.2f GB/s at %s between %.2f and %.2f", where, v, results.HumanSize(rows[i].SizeBytes), prev, next)
			}
			return fmt.Sprintf("%s busbw drops to %.2f GB/s at the largest size %s after %.2f", where, v, results.HumanSize(rows[i].SizeBytes), prev)
		}
	}
	return ""
}

// ratioMark is in every piece of evidence that rests on the result's
// ratio to its expectation alone ("busbw is 13 % of expected, the ~1/10
// signature").
const ratioMark = " of expected, the ~"

// GuessedFromRatio says whether a cause rests on the ratio to the
// expectation alone: no log line, version or setting supports it.
func GuessedFromRatio(c report.Cause) bool {
	if len(c.Evidence) == 0 {
		return false
	}
	for _, e := range c.Evidence {
		if !strings.Contains(e, ratioMark) {
			return false
		}
	}
	return true
}
