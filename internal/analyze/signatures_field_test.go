package analyze

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// The signatures added from the field read their real lines behind any
// prefix, and lines that look alike but are NCCL 2's or another call's do
// not fire them.
func TestBatch12Signatures(t *testing.T) {
	cases := []struct {
		line, id string
		fire     bool
	}{
		// NCCL 1's WARN macro: "WARN %s:%d " (v1.3.0-1 src/core.h)
		{"WARN src/core.cu:225 failed to allocate 2101248 byte device buffer", "error.nccl-1x", true},
		{"WARN src/core.cu:683 rank 12 failed to allocate communicator", "error.nccl-1x", true},
		// NCCL 2 prints "host:pid:tid [dev] file:line NCCL WARN"
		{"gpu1:18553:18611 [0] include/socket.h:360 WARN Call to connect failed : Connection timed out", "error.nccl-1x", false},
		{"node01:1297:1297 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]", "error.nccl-1x", false},
		{"node01:1297:1297 [0] NCCL WARN src/init.cu:100 something", "error.nccl-1x", false},
		{"misc/ibvwrap.cc:288 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Operation not supported", "error.dmabuf-unsupported", true},
		{"misc/ibvwrap.cc:288 NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory", "error.dmabuf-unsupported", false},
		{"misc/ibvwrap.cc:212 NCCL WARN Call to ibv_open_device failed", "error.ib-open-device-failed", true},
		{"transport/net_ib.cc:148 NCCL WARN NET/IB : Unable to open device mlx5_bond_0", "error.ib-open-device-failed", true},
		{"node013:37715:38896 [0] NCCL INFO NET/IB : No device found.", "error.ib-open-device-failed", false},
	}
	for _, c := range cases {
		checkFlag(t, c.line, c.id, c.fire)
	}
}

// Batch 16's signatures: a socket connect with no route, an OFI
// registration refused with EINVAL, NCCL's duplicate-GPU words with a
// paste's own lead, and a graph fallback to a network device id the
// topology lacks. Look-alikes (a refused connection, another error code,
// other ranks' words) do not fire them.
func TestBatch16Signatures(t *testing.T) {
	cases := []struct {
		line, id string
		fire     bool
	}{
		// a real traceback's line, and NCCL 2.30's two forms (src/os/linux.cc)
		{"socketStartConnect: Connect to 192.168.19.14<52822> failed : No route to host", "error.socket-no-route", true},
		{"node1:11:12 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<39881> failed : Network is unreachable", "error.socket-no-route", true},
		{"node1:11:12 [0] os/linux.cc:328 NCCL WARN ncclOsSocketPollConnect to 10.0.0.2<39881> failed with error No route to host", "error.socket-no-route", true},
		{"node1:11:12 [0] os/linux.cc:287 NCCL WARN ncclSocketConnect: connect to 10.0.0.2<39881> returned No route to host, exceeded error retry count after 35 attempts", "error.socket-no-route", true},
		{"socketStartConnect: Connect to 192.168.19.14<52822> failed : Connection refused", "error.socket-no-route", false},
		{"ibv_modify_qp failed with 101 Network is unreachable", "error.socket-no-route", false},
		{"register_rail_mr_buffer:617 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 4. RC: -22, Error: Invalid argument", "error.ofi-register-mr-einval", true},
		{"register_mr_buffers:544 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 0. RC: -22, Error: Invalid argument", "error.ofi-register-mr-einval", true},
		{"register_mr_buffers:544 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 0. RC: -12, Error: Cannot allocate memory", "error.ofi-register-mr-einval", false},
		{"Error: rank 27 and rank 19 both on CUDA device 53000 (PCI 53:00.0)", "error.duplicate-gpu", true},
		{"gpu7:2211:2211 [3] init.cc:904 NCCL WARN Duplicate GPU detected : rank 3 and rank 1 both on CUDA device 4f000", "error.duplicate-gpu", true},
		{"rank 3 and rank 1 both on CUDA devices 0 and 1", "error.duplicate-gpu", false},
		{"graph/topo.h:230 NCCL WARN Could not find NET with id 0", "error.net-id-not-found", true},
		{"gpu3:3021:3300 [1] graph/topo.h:234 NCCL WARN Could not find NET with id 1a", "error.net-id-not-found", true},
		{"gpu3:3021:3300 [1] graph/topo.h:212 NCCL WARN Could not find GPU in topology with rank 3", "error.net-id-not-found", false},
	}
	for _, c := range cases {
		checkFlag(t, c.line, c.id, c.fire)
	}
}

// Batch 17's signatures: NCCL giving up on CollNet for the point-to-point
// network, and iperf3 UDP datagrams that carried no sequence number. Any
// host, pid, rank, device, stream or repeat count fires them; CollNet lines
// that succeed and out-of-order datagrams with a real sequence do not.
func TestBatch17Signatures(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 3617))
	for i := 0; i < 40; i++ {
		host := fmt.Sprintf("node-%d", r.IntN(500))
		pid, dev, sp := r.IntN(4_000_000)+1, r.IntN(8), r.IntN(60)+3
		line := fmt.Sprintf("%s:%d:%d [%d] transport.cc:%d NCCL WARN Cannot initialize CollNet, using point-to-point network instead", host, pid, pid+r.IntN(500), dev, 300+r.IntN(200))
		var paste strings.Builder
		for n := r.IntN(5) + 1; n > 0; n-- {
			paste.WriteString(line + "\n")
		}
		checkFlag(t, paste.String(), "error.collnet-init-failed", true)
		var udp strings.Builder
		for n := r.IntN(30) + 1; n > 0; n-- {
			got := r.IntN(1000) + 1
			if r.IntN(2) == 0 {
				fmt.Fprintf(&udp, "iperf3: OUT OF ORDER - incoming packet = 0 and received packet = %d AND SP = %d\n", got, sp)
			} else {
				fmt.Fprintf(&udp, "OUT OF ORDER - received packet 0 but expected sequence %d on stream %d\n", got, sp)
			}
		}
		checkFlag(t, udp.String(), "error.iperf-udp-len-too-small", true)
		seq := r.IntN(100000) + 1
		checkFlag(t, fmt.Sprintf("iperf3: OUT OF ORDER - incoming packet = %d and received packet = %d AND SP = %d\n", seq, seq+r.IntN(9)+1, sp), "error.iperf-udp-len-too-small", false)
		checkFlag(t, fmt.Sprintf("OUT OF ORDER - received packet %d but expected sequence %d on stream %d\n", seq, seq+1, sp), "error.iperf-udp-len-too-small", false)
		checkFlag(t, fmt.Sprintf("iperf3: OUT OF ORDER - incoming packet = 0%d and received packet = 1 AND SP = %d\n", seq, sp), "error.iperf-udp-len-too-small", false)
		checkFlag(t, fmt.Sprintf("%s:%d:%d [%d] NCCL INFO CollNet %d/%d channels", host, pid, pid, dev, r.IntN(16)+1, r.IntN(16)+1), "error.collnet-init-failed", false)
	}
}

// behind puts pre in front of every line of paste.
func behind(pre, paste string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(paste, "\n") {
		if l != "" {
			b.WriteString(pre + l)
		}
	}
	return b.String()
}

func checkFlag(t *testing.T, paste, id string, fire bool) {
	t.Helper()
	for _, pre := range launchPrefixes {
		a := Reader("s.txt", strings.NewReader(behind(pre, paste)), Options{})
		if got := hasFlag(a, id); got != fire {
			t.Errorf("%q behind %q: %s fired %v, want %v (%+v)", paste, pre, id, got, fire, a.Flags)
		}
	}
}

// NCCL's graph-capture query failing on an old driver fires from
// enqueue.cc in either CUDACHECK form, behind any tag; the same CUDA error
// from another file, or another CUDA error from enqueue.cc, does not.
func TestGraphCaptureOldDriverSignature(t *testing.T) {
	r := rand.New(rand.NewPCG(496, 802))
	for i := 0; i < 30; i++ {
		head := fmt.Sprintf("%x:%d:%d [%d]", r.Uint32(), r.IntN(90000)+1, r.IntN(90000)+1, r.IntN(16))
		code := ""
		if r.IntN(2) == 0 {
			code = " 36"
		}
		line := fmt.Sprintf("%s enqueue.cc:%d NCCL WARN Cuda failure%s 'API call is not supported in the installed CUDA driver'\n", head, 700+r.IntN(400), code)
		checkFlag(t, line, "error.nccl-graph-capture-old-driver", true)
		checkFlag(t, strings.Replace(line, "enqueue.cc", "init.cc", 1), "error.nccl-graph-capture-old-driver", false)
		checkFlag(t, fmt.Sprintf("%s enqueue.cc:%d NCCL WARN Cuda failure 'invalid device ordinal'\n", head, 700+r.IntN(400)), "error.nccl-graph-capture-old-driver", false)
	}
}

// NCCL's NVLS multicast setup failing in transport/nvls.cc with the CUDA
// errors a stale fabric gives (invalid argument, 401 illegal state, 999
// unknown error; with or without the code, as NCCL's CUDACHECK forms print
// it), and NCCL 2.27's own bind message, fire nvls-fabric-stale above the
// generic CUDA failure, behind any tag and for any rank or line number. The
// same errors from another file, and other CUDA errors in nvls.cc (out of
// memory, not supported), do not.
func TestNVLSFabricSignature(t *testing.T) {
	r := rand.New(rand.NewPCG(125, 133))
	errs := []string{"1 'invalid argument'", "'invalid argument'", "999 'unknown error'", "'unknown error'",
		"401 'the operation cannot be performed in the present state'"}
	for i := 0; i < 30; i++ {
		head := fmt.Sprintf("%s%d:%d:%d [%d]", []string{"gpu", "node", "h200-"}[r.IntN(3)], r.IntN(500), r.IntN(4_000_000)+1, r.IntN(4_000_000)+1, r.IntN(8))
		e := errs[r.IntN(len(errs))]
		line := fmt.Sprintf("%s transport/nvls.cc:%d NCCL WARN Cuda failure %s\n", head, 100+r.IntN(600), e)
		checkFlag(t, line, "error.nvls-fabric-stale", true)
		checkFirst(t, line+fmt.Sprintf("%s NCCL INFO transport/nvls.cc:%d -> 1\n", head, 300+r.IntN(200)), "error.nvls-fabric-stale")
		checkFlag(t, strings.Replace(line, "transport/nvls.cc", "transport/p2p.cc", 1), "error.nvls-fabric-stale", false)
		checkFlag(t, fmt.Sprintf("%s transport/nvls.cc:%d NCCL WARN Cuda failure 2 'out of memory'\n", head, 100+r.IntN(600)), "error.nvls-fabric-stale", false)
		checkFlag(t, fmt.Sprintf("%s transport/nvls.cc:%d NCCL WARN Cuda failure 801 'operation not supported'\n", head, 100+r.IntN(600)), "error.nvls-fabric-stale", false)
		bind := fmt.Sprintf("%s transport/nvls.cc:%d NCCL WARN Failed to bind NVLink SHARP (NVLS) Multicast memory of size %d : CUDA error %d '%s'.\n", head, 280+r.IntN(100), 1<<(20+r.IntN(6)), []int{1, 401, 999}[r.IntN(3)], "x")
		checkFirst(t, bind, "error.nvls-fabric-stale")
	}
	// the NVLS lines of a healthy start, in the formats of NCCL 2.23's
	// transport/nvls.cc (lines 171 and 281)
	for _, l := range []string{
		"node1:11:12 [0] NCCL INFO NVLS multicast support is available on dev 0\n",
		"node1:11:12 [3] NCCL INFO NVLS multicast support is not available on dev 3\n",
		"node1:11:12 [0] NCCL INFO NVLS comm 0x55d0c8a1b2c0 headRank 0 nHeads 8 buffSize 1048576 nvlsPerRankSize 201326592 nvlsTotalSize 1610612736\n",
	} {
		checkFlag(t, l, "error.nvls-fabric-stale", false)
	}
}

// checkFirst: behind every prefix, the paste ranks id first.
func checkFirst(t *testing.T, paste, id string) {
	t.Helper()
	for _, pre := range launchPrefixes {
		a := Reader("s.txt", strings.NewReader(behind(pre, paste)), Options{})
		if got := topCause(a); got != id {
			t.Errorf("%q behind %q: first %q, want %s (%+v)", paste, pre, got, id, a.Flags)
		}
	}
}

// A crash inside ncclShmOpen, as gdb prints where a signal stopped the
// process (field case 136, NVIDIA/JAX-Toolbox#183: "0x… in func (…) from
// lib"; the "#N" frames of a backtrace are left to the lines around
// them), fires the /dev/shm SIGBUS from any library; other NCCL
// functions and the function named outside a frame do not.
func TestShmOpenFrameSignature(t *testing.T) {
	for line, fire := range map[string]bool{
		"0x00007f6b59544f3b in ncclShmOpen(char*, unsigned long, void**, void**, int, void**) () from /usr/local/lib/python3.10/dist-packages/jaxlib/xla_extension.so": true,
		"0x00007fd2a1c3e6b1 in ncclShmOpen(char*, unsigned long, void**, void**, int, void**) () from /usr/lib/x86_64-linux-gnu/libnccl.so.2":                          true,
		"#1 0x00007f6b595436d7 in ncclProxyService(void*) ()":                                false,
		"#3 0x00007f6b5e83ebb4 in clone () at ../sysdeps/unix/sysv/linux/x86_64/clone.S:100": false,
		"see ncclShmOpen() in src/misc/shmutils.cc":                                          false,
	} {
		checkFlag(t, line+"\n", "error.sigbus-shm", fire)
	}
}
