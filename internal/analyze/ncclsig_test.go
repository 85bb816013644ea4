package analyze

import (
	"fmt"
	mrand "math/rand"
	"math/rand/v2"
	"strings"
	"testing"
)

// ncclHead is an NCCL log line's "host:pid:tid [dev]" for a random host,
// process and GPU.
func ncclHead(r *rand.Rand) string {
	return fmt.Sprintf("%s%d:%d:%d [%d]", []string{"gpu", "node-", "worker-", "dgx"}[r.IntN(4)], r.IntN(500), r.IntN(4_000_000)+1, r.IntN(4_000_000)+1, r.IntN(8))
}

// NCCL's WARN that it could not dlopen NVML, in each release's form
// (src/misc/nvmlwrap.cc to 2.29, src/os/linux.cc and windows.cc from
// 2.30), on any number of ranks and followed by the error trail and the
// "unhandled system error" it causes, ranks nvml-library-missing first,
// above the generic system error; the system error alone, NCCL's line that
// NVML loaded and another library's failure do not raise it.
func TestNVMLMissingSignature(t *testing.T) {
	r := rand.New(rand.NewPCG(211, 320))
	warns := []string{
		"misc/nvmlwrap.cc:%d NCCL WARN Failed to open libnvidia-ml.so.1",
		"os/linux.cc:%d NCCL WARN Failed to open libnvidia-ml.so.1: libnvidia-ml.so.1: cannot open shared object file: No such file or directory",
		"os/windows.cc:%d NCCL WARN Failed to load nvml.dll, error code: 126",
	}
	for range 20 {
		var b strings.Builder
		for range 1 + r.IntN(8) {
			head := ncclHead(r)
			fmt.Fprintf(&b, "%s "+warns[r.IntN(len(warns))]+"\n", head, 60+r.IntN(600))
			fmt.Fprintf(&b, "%s NCCL INFO misc/nvmlwrap.cc:%d -> 2\n%s NCCL INFO init.cc:%d -> 2\n", head, 190+r.IntN(20), head, 300+r.IntN(1500))
		}
		b.WriteString([]string{
			"gpu0301: Test NCCL failure common.cu:1119 'unhandled system error (run with NCCL_DEBUG=INFO for details) / '\n",
			"RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled system error, NCCL version 2.26.2\n",
		}[r.IntN(2)])
		checkFirst(t, b.String(), "error.nvml-library-missing")
	}
	for _, l := range []string{
		"RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled system error, NCCL version 2.26.2\n",
		"node1:11:12 [0] NCCL INFO Loaded NVML from libnvidia-ml.so.1\n",
		"node1:11:12 [0] NCCL INFO Failed to open libibverbs.so[.1]\n",
		"node1:11:12 [0] misc/gdrwrap.cc:73 NCCL WARN Failed to open libgdrapi.so - libgdrapi.so: cannot open shared object file\n",
	} {
		checkFlag(t, l, "error.nvml-library-missing", false)
	}
}

// NCCL's socketFinalizeAccept WARN for a peer that connected with the
// other network transport's socket type (4 NET/IB, 3 NET/Socket, either
// way round; the forms before and from 2.27, which names the peer's
// address), on any number of ranks, ranks socket-type-mismatch first; the
// same in 2.30.7's INFO form, which discards the connection so that the
// transport's own never comes; the other socket types (bootstrap 1, proxy
// 2, RAS 5) and a wrong magic do not raise it.
func TestSocketTypeMismatchSignature(t *testing.T) {
	r := rand.New(rand.NewPCG(190, 360))
	for range 20 {
		var b strings.Builder
		for range 1 + r.IntN(8) {
			head := ncclHead(r)
			pair := []string{"4 != 3", "3 != 4"}[r.IntN(2)]
			from := []string{"", fmt.Sprintf(" from 10.%d.%d.%d<%d>", r.IntN(256), r.IntN(256), r.IntN(256), 30000+r.IntN(30000))}[r.IntN(2)]
			fmt.Fprintf(&b, "%s misc/socket.cc:%d NCCL WARN socketFinalizeAccept%s: wrong type %s\n", head, 330+r.IntN(300), from, pair)
			fmt.Fprintf(&b, "%s NCCL INFO misc/socket.cc:%d -> 3\n%s NCCL INFO transport/net_socket.cc:%d -> 3\n", head, 600+r.IntN(60), head, 380+r.IntN(40))
		}
		checkFirst(t, b.String(), "error.socket-type-mismatch")
		// 2.30.7's INFO form (src/misc/socket.cc v2.30.7-1:378-381): the
		// connection is discarded and the transport's connection never comes
		info := fmt.Sprintf("%s NCCL INFO socketFinalizeAccept from 10.%d.%d.%d<%d>: wrong socket type (peer %s -- peer connected to wrong NCCL socket), discarding peer connection\n",
			ncclHead(r), r.IntN(256), r.IntN(256), r.IntN(256), 30000+r.IntN(30000), []string{"4 != expected 3", "3 != expected 4"}[r.IntN(2)])
		checkFirst(t, info, "error.socket-type-mismatch")
	}
	for _, l := range []string{
		"node-0:5109:5177 [0] misc/socket.cc:502 NCCL WARN socketFinalizeAccept: wrong type 1 != 2\n",
		"node-0:5109:5177 [0] misc/socket.cc:502 NCCL WARN socketFinalizeAccept: wrong type 5 != 4\n",
		"node-0:5109:5177 [0] misc/socket.cc:502 NCCL WARN socketFinalizeAccept: wrong type 43 != 3\n",
		"node-0:5109:5177 [0] misc/socket.cc:502 NCCL WARN socketFinalizeAccept: wrong type 4 != 31\n",
		"node-0:5109:5177 [0] misc/socket.cc:484 NCCL WARN socketFinalizeAccept: wrong magic 4 != 3\n",
		"node-0:5109:5177 [0] NCCL INFO socketFinalizeAccept from 10.0.0.2<40000>: wrong socket type (peer 1 != expected 2 -- peer connected to wrong NCCL socket), discarding peer connection\n",
	} {
		checkFlag(t, l, "error.socket-type-mismatch", false)
	}
}

// NCCL's NVLS bind WARN with CUDA error 2 (out of memory from
// cuMulticastBindMem after the unicast memory was created and mapped: the
// multicast resources are used up), whether NCCL's own line or a
// framework's quote of it, on any size, ranks nvls-multicast-slots-exhausted
// first and not nvls-fabric-stale; the bind failing with another CUDA
// error (20, 200, 2xx) does not raise it.
func TestNVLSMulticastSlotsSignature(t *testing.T) {
	r := rand.New(rand.NewPCG(216, 2077))
	for range 20 {
		size := 1 << (20 + r.IntN(8))
		var b strings.Builder
		if r.IntN(2) == 0 {
			b.WriteString("torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:93, unhandled cuda error, NCCL version 2.29.7\nncclUnhandledCudaError: Call to CUDA function failed.\n")
			fmt.Fprintf(&b, "Failed to bind NVLink SHARP (NVLS) Multicast memory of size %d : CUDA error 2 'out of memory'.\n", size)
		} else {
			for range 1 + r.IntN(8) {
				fmt.Fprintf(&b, "%s transport/nvls.cc:%d NCCL WARN Failed to bind NVLink SHARP (NVLS) Multicast memory of size %d : CUDA error 2 'out of memory'.\n", ncclHead(r), 280+r.IntN(20), size)
			}
		}
		b.WriteString("This is usually caused by a system or configuration error in the Fabric Manager or NVSwitches.\nDisable NVLS (NCCL_NVLS_ENABLE=0) if you wish to avoid this error in the future.\n")
		checkFirst(t, b.String(), "error.nvls-multicast-slots-exhausted")
		checkFlag(t, b.String(), "error.nvls-fabric-stale", false)
	}
	for _, code := range []string{"20 'invalid device'", "200 'device kernel image is invalid'", "217 'peer access is not supported between these two devices'"} {
		line := "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error " + code + ".\n"
		checkFlag(t, line, "error.nvls-multicast-slots-exhausted", false)
		checkFirst(t, line, "error.nvls-fabric-stale")
	}
}

// NCCL 2.27 to 2.28 print the bind failure as an INFO line ending in
// "Proceeding without NVLS support." when NVLS is not forced on
// (src/transport/nvls.cc v2.28.9-1:283-290: the WARN only with
// NCCL_NVLS_ENABLE=1); the communicator goes on without NVLS, so the line
// raises neither NVLS signature, on any CUDA error, size or prefix, and a
// log ending in Init COMPLETE stays healthy.
func TestNVLSBindProceedingIsNoFailure(t *testing.T) {
	r := rand.New(rand.NewPCG(227, 289))
	for range 20 {
		head := ncclHead(r)
		code := []string{"2 'out of memory'", "1 'invalid argument'", "999 'unknown error'", "401 'operation not permitted when stream is capturing'"}[r.IntN(4)]
		paste := fmt.Sprintf("%s NCCL INFO Failed to bind NVLink SHARP (NVLS) Multicast memory of size %d : CUDA error %s. Proceeding without NVLS support.\n", head, 1<<(20+r.IntN(8)), code) +
			head + " NCCL INFO comm 0x5581f0a0 rank 0 nranks 8 cudaDev 0 nvmlDev 0 busId 18000 commId 0x1c2b3a4d5e6f7081 - Init COMPLETE\n"
		checkFlag(t, paste, "error.nvls-multicast-slots-exhausted", false)
		checkFlag(t, paste, "error.nvls-fabric-stale", false)
	}
}

// NCCL's family WARN ("ncclSocketInit: connecting to address  with family
// N is neither AF_INET(2) nor AF_INET6(10)", src/misc/socket.cc) after the
// communicator completed its init, on any number of ranks and hosts, any
// family and release, reads as connection information the ranks did not
// agree on, above the interface signature, which it takes out; the
// message before any completed init (an interface NCCL_SOCKET_IFNAME did
// not find) keeps the interface signature and raises no such cause.
func TestConnectInfoMismatch(t *testing.T) {
	r := rand.New(rand.NewPCG(215, 2057))
	for range 12 {
		version := []string{"2.29.2+cuda12.8", "2.21.5+cuda12.4", "2.26.2+cuda12.2", "2.18.3+cuda12.1"}[r.IntN(4)]
		hosts, procs := 1+r.IntN(3), 1+r.IntN(4)
		nranks := hosts * procs
		var start, warn strings.Builder
		for h := range hosts {
			for p := range procs {
				head := fmt.Sprintf("VM-%d-ubuntu:%d:%d [%d]", h, 28000+h*10+p, 28000+h*10+p, p)
				fmt.Fprintf(&start, "%s NCCL INFO Bootstrap: Using eth0:172.17.16.%d<0>\n", head, 60+h)
				if h == 0 && p == 0 {
					fmt.Fprintf(&start, "%s NCCL INFO NCCL version %s\n", head, version)
				}
				fmt.Fprintf(&start, "%s NCCL INFO NET/Socket : Using [0]eth0:172.17.16.%d<0>\n", head, 60+h)
				fmt.Fprintf(&start, "%s NCCL INFO ncclCommInitRank comm 0x55eb22a04a%02x rank %d nranks %d cudaDev %d nvmlDev %d busId %d000 commId 0x2ef13c5ed0553a05 - Init COMPLETE\n", head, h*procs+p, h*procs+p, nranks, p, p, p+1)
				if r.IntN(2) == 0 || h == 0 && p == 0 {
					fmt.Fprintf(&warn, "%s misc/socket.cc:%d NCCL WARN ncclSocketInit: connecting to address  with family %d is neither AF_INET(2) nor AF_INET6(10)\n", head, 500+r.IntN(100), []int{0, 1, 59936}[r.IntN(3)])
					fmt.Fprintf(&warn, "%s NCCL INFO transport/net_socket.cc:%d -> 3\n%s NCCL INFO transport/net.cc:%d -> 3\n", head, 390+r.IntN(20), head, 850+r.IntN(30))
				}
			}
		}
		tail := "NCCL error a.cu:46: internal error - please report this issue to the NCCL developers\n"
		paste := start.String() + warn.String() + tail
		checkFirst(t, paste, "nccl.connect-info-mismatch")
		checkFlag(t, paste, "error.socket-ifname-not-found", false)
		// the same lines before any completed init
		noInit := strings.ReplaceAll(paste, " - Init COMPLETE", " - Init START")
		checkFirst(t, noInit, "error.socket-ifname-not-found")
		checkFlag(t, noInit, "nccl.connect-info-mismatch", false)
	}
}

// A message whose signature names the NCCL release that fixed a cause of
// it (fixed_in) reads as NCCL too old, first, where the lines name an
// older release: NCCL's banner, a framework's version line or that line
// wrapped after "NCCL", behind any prefix; the fixing release or a later
// one, or no release in the lines, leaves the message's own reading first.
func TestFixedLaterRelease(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 183))
	// the fix is for Hopper (18 NVLinks, sm90): nlinks above 12 shows one
	hopper := true
	warn := func() string {
		n := 1 + r.IntN(12)
		if hopper {
			n = 13 + r.IntN(6)
		}
		return fmt.Sprintf("Failed to find reverse path from remNode 0/%x nlinks %d to node 0/%x\n", 0x10000+r.IntN(0xf0000), n, 0x10000+r.IntN(0xf0000))
	}
	forms := []func(v string) string{
		func(v string) string { // a framework's quote, the version on its line
			return "DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, internal error, NCCL version " + v + "\nncclInternalError: Internal check failed.\nLast error:\n" + warn()
		},
		func(v string) string { // the same wrapped after "NCCL"
			return "DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, internal error, NCCL\nversion " + v + "\nncclInternalError: Internal check failed.\nLast error:\n" + warn()
		},
		func(v string) string { // NCCL's own log
			h := ncclHead(r)
			return fmt.Sprintf("%s NCCL INFO NCCL version %s+cuda11.7\n%s graph/paths.cc:79 NCCL WARN %s%s NCCL INFO graph/paths.cc:%d -> 3\n", h, v, h, warn(), h, 600+r.IntN(100))
		},
	}
	for range 4 {
		for _, form := range forms {
			for _, v := range []string{"2.14.3", "2.10.3", "2.7.8", "2.12.12"} {
				checkFirst(t, form(v), "nccl.too-old")
			}
			for _, v := range []string{"2.15.1", "2.18.5", "2.21.5"} {
				p := form(v)
				checkFlag(t, p, "nccl.too-old", false)
				checkFirst(t, p, "error.nccl-topology-reverse-path-missing")
			}
		}
	}
	checkFirst(t, warn(), "error.nccl-topology-reverse-path-missing")
	checkFlag(t, warn(), "nccl.too-old", false)
	// the message speaks to the user; where in NCCL's source the fix lies
	// is the source field's
	f := flagOf(analyseText(forms[0]("2.14.3")), "nccl.too-old")
	if f == nil || strings.Contains(f.Message, "git ") || strings.Contains(f.Message, ".cc") || !strings.Contains(f.Source, "xml.cc") {
		t.Errorf("nccl.too-old: %+v", f)
	}
	// no Hopper GPU in the lines (12 NVLinks or fewer, an A100): the fix
	// may not concern it, the message keeps its own reading first
	hopper = false
	for range 4 {
		for _, form := range forms {
			for _, v := range []string{"2.14.3", "2.10.3", "2.7.8", "2.12.12"} {
				p := form(v)
				checkFirst(t, p, "error.nccl-topology-reverse-path-missing")
				// the GPU named in the lines is a Hopper one
				gpu := []string{"NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA GH200 480GB"}[r.IntN(3)]
				checkFirst(t, "#  Rank  0 Group  0 Pid  4242 on node-1 device  0 [0000:18:00] "+gpu+"\n"+p, "nccl.too-old")
			}
		}
	}
}

// NET/IB's async local access violation from NCCL 2.20.3 or later reads as
// the two ends' MTUs differing, first, whatever host, device and port:
// the release from the lines' version, or from the event's own form (the
// net_ib.cc line of "Got async event" in 2.20.3 to 2.22.3, the "async
// fatal event on QP" form from 2.23.4). An earlier release (by its line or
// its banner), a line no release has with no version in the lines, or the
// queue pair lines showing one MTU, leave the event's own reading.
func TestIBMTUFromAccessViolation(t *testing.T) {
	r := rand.New(rand.NewPCG(1524, 26))
	event := func(line int) string {
		return fmt.Sprintf("%s transport/net_ib.cc:%d NCCL WARN NET/IB : mlx5_%d:1 Got async event : local access violation work queue error\n", ncclHead(r), line, r.IntN(8))
	}
	fatal := func() string {
		return fmt.Sprintf("%s transport/net_ib.cc:%d NCCL WARN NET/IB : mlx5_%d:1 async fatal event on QP (0x7309dc3b%04x): local access violation work queue error\n", ncclHead(r), []int{152, 180, 190, 231}[r.IntN(4)], r.IntN(8), r.IntN(1<<16))
	}
	const flushed = "ubuntu20-server-2:94639:94652 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 192.168.1.2<57888> with status=5 opcode=1 len=0 vendor err 249 (Recv) localGid fe80::e61d:2dff:fef2:9c94 remoteGidsfe80::e61d:2dff:fef2:9fa0\n"
	banner := func(v string) string { return "gpu1:11:11 [0] NCCL INFO NCCL version " + v + "+cuda12.4\n" }
	for range 8 {
		for _, ln := range []int{100, 101, 103} {
			checkFirst(t, event(ln)+event(ln)+flushed, "nccl.ib-mtu-mismatch")
			checkFlag(t, banner("2.19.3")+event(ln), "nccl.ib-mtu-mismatch", false)
		}
		checkFirst(t, fatal(), "nccl.ib-mtu-mismatch")
		for _, ln := range []int{73, 74, 80, 93, 94, 95, 999} {
			checkFlag(t, event(ln)+flushed, "nccl.ib-mtu-mismatch", false)
			checkFirst(t, event(ln), "error.ib-async-access-violation")
		}
		checkFirst(t, banner([]string{"2.20.3", "2.21.5", "2.26.2"}[r.IntN(3)])+event(999), "nccl.ib-mtu-mismatch")
		// the queue pair lines show one MTU on both hosts
		qp := strings.Join(mtuJob(mrand.New(mrand.NewSource(int64(r.IntN(1000)))), 2, 1, []int{5, 5}, "2.20.3", false), "\n") + "\n"
		checkFlag(t, qp+event(100), "nccl.ib-mtu-mismatch", false)
	}
}
