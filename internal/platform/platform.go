// Package platform is the one place that decides what hardware a node is:
// a DGX Spark (GB10), or a known data-centre GPU. Checks pick their profile,
// bench and analyze their expectations, and bench gpu its memory wire from
// the same answer.
package platform

import (
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
)

// Platforms, as expectations are filed under them.
const (
	DGXSpark = "dgx-spark"
	H200     = "h200"
	H100     = "h100"
	A100     = "a100"
)

// FromGPUName names the platform of a GPU from its name ("NVIDIA GB10",
// "NVIDIA H200", ...), or "" for one sparkrig has no numbers for.
func FromGPUName(name string) string {
	n := strings.ToUpper(name)
	switch {
	case strings.Contains(n, "GB10"):
		return DGXSpark
	case strings.Contains(n, "H200"):
		return H200
	case strings.Contains(n, "H100"):
		return H100
	case strings.Contains(n, "A100"):
		return A100
	}
	return ""
}

// Of names a node's platform: /etc/dgx-release naming a DGX Spark, or any
// GB10 GPU, is a DGX Spark; otherwise its first GPU decides.
func Of(n *facts.Node) string {
	if IsSpark(n) {
		return DGXSpark
	}
	if len(n.GPUs) > 0 {
		return FromGPUName(n.GPUs[0].Name)
	}
	return ""
}

// IsSpark reports whether the node is a DGX Spark (or an OEM GB10 system).
func IsSpark(n *facts.Node) bool {
	if n.DGX != nil && strings.Contains(n.DGX.Name, "Spark") {
		return true
	}
	for _, g := range n.GPUs {
		if FromGPUName(g.Name) == DGXSpark {
			return true
		}
	}
	return false
}

// SparkPort is one QSFP port of a DGX Spark's ConnectX-7: two PCIe functions
// ("twins", PCI domains 0000 and 0002), each good for about 100 Gb/s; a cable
// carries full bandwidth only with both addressed (docs/dgx-spark.md).
type SparkPort struct {
	Name  string    // "port 0"
	Twins [2]string // netdevs, twin 0 then twin 1
	RDMA  [2]string // RDMA devices of the same functions
}

// SparkPorts is the DGX Spark's ConnectX-7 port table, port 0 (next to the
// RJ45 jack) then port 1.
var SparkPorts = [2]SparkPort{
	{"port 0", [2]string{"enp1s0f0np0", "enP2p1s0f0np0"}, [2]string{"rocep1s0f0", "roceP2p1s0f0"}},
	{"port 1", [2]string{"enp1s0f1np1", "enP2p1s0f1np1"}, [2]string{"rocep1s0f1", "roceP2p1s0f1"}},
}
