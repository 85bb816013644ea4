package analyze

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// weightP2PStall ranks a stop after init below every signature and
// startup cause: it is read from what the log lacks.
const weightP2PStall = 0.6

// p2pStallAfterInit: on one node, two or more ranks finished NCCL's init
// ("Init COMPLETE") and the log shows nothing after it but connection
// lines: no result row, no WARN, no further INFO line (a Destroy, a
// collective's trace); or nccl-tests printed its column header (which it
// does once its communicators are up) and no row under it. A job on one node that stops there, GPUs busy, is
// waiting on its first collective's peer-to-peer traffic; NCCL's
// troubleshooting guide names PCIe ACS with IO virtualization (VT-d,
// IOMMU) first: it redirects PCI peer-to-peer traffic to the CPU root
// complex, a large slowdown or a hang. Against: more than one node (the
// network is then as likely), P2P turned off or refused (NCCL then does
// not use PCIe peer-to-peer), any WARN or error line, DGX Spark (one GPU
// per node).
func (a *analysis) p2pStallAfterInit(o *results.NCCLOutput) {
	l := &o.Log
	if l.WarnCount > 0 || l.AttnCount > 0 || l.BootstrapFail != "" || a.res.Platform == "dgx-spark" {
		return
	}
	for _, t := range o.Tables {
		if len(t.Rows) > 0 {
			return
		}
	}
	if strings.TrimSpace(l.Env["NCCL_P2P_DISABLE"]) == "1" || l.P2PRefused > 0 || l.NNodes > 1 {
		return
	}
	hosts := slices.Clone(l.Hosts)
	ranks := max(l.NRanks, l.LocalRanks)
	var ev string
	inits, other := l.AfterInit()
	switch nr := o.Launch.NoRows; {
	case nr != nil && nr.Header:
		// nccl-tests prints its column header once its communicators are
		// up: no row under it is a stop at the first size
		for _, h := range nr.Hosts {
			if h != "" && !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
		ranks = max(ranks, nr.Ranks)
		ev = fmt.Sprintf("nccl-tests printed its column header for %d ranks and no result row under it", nr.Ranks)
	case inits > 0 && other == 0:
		ev = fmt.Sprintf("%d 'Init COMPLETE' line%s of a %d-rank communicator", inits, plural(int(inits)), ranks)
	default:
		return
	}
	if len(hosts) > 1 || ranks < 2 {
		return
	}
	if len(hosts) == 1 {
		ev += " on one host, " + hosts[0]
	} else {
		ev += " in one process"
	}
	kinds, _ := l.TransportKinds()
	p2p, shm := int64(0), int64(0)
	for k, n := range kinds {
		switch {
		case strings.HasPrefix(k, "NET"):
			return
		case strings.HasPrefix(k, "P2P"):
			p2p += n
		case strings.HasPrefix(k, "SHM"):
			shm += n
		}
	}
	switch {
	case p2p > 0:
		ev += fmt.Sprintf("; %d channel connections via P2P (GPU peer-to-peer over PCIe or NVLink)", p2p)
	case shm > 0:
		ev += fmt.Sprintf("; NCCL's channels via SHM only (%d): P2P used, if at all, by the framework's own kernels", shm)
	default:
		ev += "; no channel line in the paste"
	}
	if inits > 0 {
		ev += "; after the last Init COMPLETE no NCCL line but connections"
	}
	ev += "; no result row, no WARN or error line"
	a.cause(weightP2PStall, report.Warn, "nccl.p2p-stall-after-init",
		"the job finished NCCL's init on one node and the log stops there, with no collective completed: if it hung here with the GPUs busy, the first suspect is PCIe ACS with IO virtualization (VT-d/IOMMU) redirecting GPU peer-to-peer traffic through the CPU root complex (a large slowdown or a hang); else a rank that never reached the first collective, or a paste cut after init",
		ev,
		"on bare metal run `sudo lspci -vvv | grep ACSCtl` (every bridge should read SrcValid- … on the GPUs' path) and check the kernel command line for intel_iommu/amd_iommu (iommu=pt or off on bare metal, or ACS off in the BIOS); rerun once with NCCL_P2P_DISABLE=1: if it then completes, the PCIe peer-to-peer path is the cause; p2pBandwidthLatencyTest from cuda-samples shows it directly; in a VM ACS stays on, so use NCCL_P2P_DISABLE=1 or P2P through ATS",
		"https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html#pci-access-control-services-acs (as archived for NCCL 2.7.3: IO virtualization (VT-d, IOMMU) can redirect all PCI point-to-point traffic to the CPU root complex, a large slowdown or even a hang; p2pBandwidthLatencyTest checks GPU-to-GPU traffic); https://github.com/NVIDIA/nccl/issues/199 and /104 (ACS on, nccl-tests hanging on one node; fixed by disabling ACS); NVIDIA/nccl src/init.cc (\"... - Init COMPLETE\", 2.4 to 2.30)")
}
