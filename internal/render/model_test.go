package render

import (
	"time"

	"github.com/sparkrig/sparkrig/internal/report"
)

// twoSparks is a doctor report for two DGX Sparks cabled port 0 to port 0
// with values seen in real outputs: MTU 1500 on the CX-7 netdevs
// (fixtures iproute2/01, iproute2/05), a switch port at 100G (ethtool/01),
// the second twin with no IPv4 so NCCL picks GID 0 (nccl-logs/09), and
// the hosts spark-bd26 / spark-3995 of the playbook and issue samples.
func twoSparks() *report.Report {
	a, b := "spark-bd26", "spark-3995"
	return &report.Report{
		Schema: report.SchemaVersion, Tool: "sparkrig", ToolVersion: "dev", Command: "doctor",
		GeneratedAt: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC), Status: "critical",
		Hosts: []report.Host{
			{Host: a, Profile: "dgx-spark", Status: report.HostAudited, Source: "spark-bd26.tar.gz", Findings: []report.Finding{
				{ID: "net.mtu", Severity: report.Warn, Host: a, Subject: "enp1s0f0np0", Title: "MTU 1500 on a CX-7 netdev",
					Observed: "mtu 1500", Expected: "mtu 9000 on both ends", Why: "jumbo frames raise NCCL bandwidth by about 5 %",
					Remedy: report.Manual(report.ActionRun, "sudo ip link set enp1s0f0np0 mtu 9000\n# persist: add 'mtu: 9000' under enp1s0f0np0 in /etc/netplan/40-cx7.yaml"), Source: "seed 000"},
				{ID: "spark.twin-unaddressed", Severity: report.Fail, Host: a, Subject: "enP2p1s0f0np0", Title: "second twin of port 0 has no IPv4 address",
					Observed: "no inet address; NCCL uses GID 0 (fe80::)", Expected: "an address on its own /24", Why: "one twin carries only half the port's bandwidth",
					Remedy: report.Manual(report.ActionRun, "sudo ip addr add 192.168.201.12/24 dev enP2p1s0f0np0"), Source: "dgx-spark-playbooks connect-two-sparks"},
				{ID: "gpu.driver", Severity: report.OK, Host: a, Subject: "GPU 0", Title: "driver 580.95.05"},
				{ID: "rdma.peermem", Severity: report.Info, Host: a, Subject: "node", Title: "GPUDirect RDMA is not available on GB10"},
			}},
			{Host: b, Profile: "dgx-spark", Status: report.HostAudited, Findings: []report.Finding{
				{ID: "net.speed", Severity: report.Warn, Host: b, Subject: "enp1s0f0np0", Title: "link at 100G, not 200G",
					Observed: "Speed: 100000Mb/s", Expected: "Speed: 200000Mb/s", Remedy: report.Manual(report.ActionRun, "force 200G on the switch port"), Source: "ethtool fixture 01"},
				{ID: "mem.cma", Severity: report.NotEvaluated, Host: b, Subject: "node", Title: "CMA size not captured"},
			}},
			{Host: "spark-3", Status: report.HostUnreachable, Error: "ssh: connect to host spark-3 port 22: connection refused", Findings: []report.Finding{}},
		},
		Cluster: &report.Cluster{Topology: "two nodes, one cable", Links: []report.Link{
			{A: report.Endpoint{Host: a, NetDev: "enp1s0f0np0", RDMADev: "rocep1s0f0", Addr: "192.168.200.13", MTU: 1500, SpeedMbps: 200000},
				B:      report.Endpoint{Host: b, NetDev: "enp1s0f0np0", RDMADev: "rocep1s0f0", Addr: "192.168.200.12", MTU: 9000, SpeedMbps: 100000},
				Subnet: "192.168.200.0/24", Status: report.LinkFaulty, Reasons: []string{"MTU differs (1500/9000)", "speed 100G"}},
			{A: report.Endpoint{Host: a, NetDev: "enP2p1s0f0np0", RDMADev: "roceP2p1s0f0", Addr: "192.168.201.13", MTU: 9000, SpeedMbps: 200000},
				B:      report.Endpoint{Host: b, NetDev: "enP2p1s0f0np0", RDMADev: "roceP2p1s0f0", Addr: "192.168.201.12", MTU: 9000, SpeedMbps: 200000},
				Subnet: "192.168.201.0/24", Status: report.LinkOK},
		}, Findings: []report.Finding{
			{ID: "cluster.mtu-mismatch", Severity: report.Fail, Subject: "spark-bd26:enp1s0f0np0 ↔ spark-3995:enp1s0f0np0", Title: "MTU differs between the ends of a link",
				Observed: "1500 / 9000", Expected: "equal", Remedy: report.Manual(report.ActionRun, "sudo ip link set enp1s0f0np0 mtu 9000   # on spark-bd26")},
		}},
	}
}
