package analyze

import (
	"fmt"
	"strings"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// weightEFANoGDR ranks the reading with the startup causes, above the
// failures a socket fallback brings.
const weightEFANoGDR = 1.05

// efaNoGDR: libfabric's EFA provider could not register GPU memory with
// the EFA device ("Failed to register CUDA buffer with the EFA device":
// at domain open it registers a small cudaMalloc buffer and marks the
// device without peer-to-peer support when that fails), and NCCL's
// traffic between nodes goes over its TCP socket transport. The EFA line
// says the device is there and answered (it is no container without
// devices): what it lacks is the GPU memory path, GPUDirect RDMA, and the
// OFI plugin did not carry the job. For: the libfabric line, channels via
// NET/Socket (or the socket network with more than one node). Against:
// a channel via NET/…/GDRDMA (GPUDirect RDMA in use), no socket traffic
// (EFA without GPUDirect RDMA is what instance types without it run:
// the signature alone says so as a warning).
func (a *analysis) efaNoGDR(o *results.NCCLOutput, hits []diagnose.ErrorHit) {
	var efa *diagnose.ErrorHit
	for i := range hits {
		if hits[i].Signature.ID == "efa-gpu-memory-unregistrable" {
			efa = &hits[i]
		}
	}
	if efa == nil {
		return
	}
	l := &o.Log
	kinds, gdr := l.TransportKinds()
	multi := l.NNodes > 1 || len(l.Hosts) > 1
	if gdr || kinds["NET/Socket"] == 0 && !(l.Network == "Socket" && multi) {
		return
	}
	ev := fmt.Sprintf("line %d: %s", efa.Line, strings.TrimSpace(efa.First))
	if n := kinds["NET/Socket"]; n > 0 {
		ev += fmt.Sprintf("; %d channel connections via NET/Socket", n)
	} else {
		ev += "; 'Using network Socket' with more than one node"
	}
	a.cause(weightEFANoGDR, report.Fail, "nccl.efa-gdr-unavailable",
		"the EFA device is present but cannot register GPU memory (no GPUDirect RDMA), and NCCL's traffic between nodes goes over TCP sockets instead of EFA: on instance types with GPUDirect RDMA (p4d, p5) the image lacks the peer-memory path, and the job runs at a fraction of the fabric's bandwidth",
		ev,
		"use an image with the EFA driver and nvidia-peermem loaded (lsmod | grep peermem) or a dma-buf capable NVIDIA driver and kernel, and the aws-ofi-nccl plugin on the library path; a run is right when its channels go via NET/…/GDRDMA",
		"https://github.com/ofiwg/libfabric/blob/main/prov/efa/src/efa_hmem.c (efa_domain_hmem_info_init_cuda, earlier in prov/efa/src/efa_domain.c: a failed ibv_reg_mr of a cudaMalloc buffer sets p2p_supported_by_device = false and warns \"Failed to register CUDA buffer with the EFA device\"); https://github.com/aws/aws-k8s-tester/pull/474 (p5.48xlarge on a bad AMI: this line, channels via NET/Socket, about 1 GB/s busbw)")
}
