package analyze

import (
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The failures NCCL's troubleshooting guide names by the line they print
// (docs/userguide/source/troubleshooting/*.rst, v2.30.7-1), as signatures:
// each line is built from the format string of the NCCL release (or the
// tool) that prints it.
var docSignatureIDs = []string{
	"error.nccl-invalid-usage", "error.roce-gid-index-wrong", "error.shm-removed-by-systemd", "error.fd-limit",
	"error.mpi-pmix-gds-lock", "error.ucx-net-device-unavailable", "error.ucx-no-am-transport", "error.mnnvl-imex-not-working",
	"error.nvlink-p2p-disabled", "error.socket-connect-failed", "error.topo-sys-pci-path-missing",
	"error.cuda-ipc-host-name-collision",
}

// ncclPrefix is NCCL's line prefix for a rank: "host:pid:tid [dev]".
func ncclPrefix(host string, rank, dev int) string {
	return fmt.Sprintf("%s:%d:%d [%d]", host, 31000+rank, 31100+rank, dev)
}

// startup is the INFO lines every rank of a healthy job prints first.
func startup(host string, rank, dev, hostIdx int, version string) []string {
	p := ncclPrefix(host, rank, dev) + " NCCL INFO "
	return []string{
		p + fmt.Sprintf("Bootstrap : Using eth0:10.20.%d.%d<0>", hostIdx, 10+hostIdx),
		p + "NCCL version " + version + "+cuda12.4",
		p + fmt.Sprintf("NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE ; OOB eth0:10.20.%d.%d<0>", hostIdx, 10+hostIdx),
		p + "Using network IB",
	}
}

// docSignatureCase builds the failing line of one signature for a rank
// (a real line format per case) and names what must rank first.
type docSignatureCase struct {
	id   string
	line func(r *rand.Rand, host string, rank, dev int) []string
}

var docSignatureCases = []docSignatureCase{
	{"error.nccl-invalid-usage", func(r *rand.Rand, host string, rank, dev int) []string {
		switch r.Intn(3) {
		case 0: // PyTorch 2.x (ProcessGroupNCCL), NCCL 2.19 and later's error string
			return []string{
				fmt.Sprintf("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:%d, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3", 1000+r.Intn(3000)),
				"ncclInvalidUsage: This usually reflects invalid usage of NCCL library.",
			}
		case 1: // PyTorch 1.x: the c10d error without the hint
			return []string{
				"RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1614378062065/work/torch/lib/c10d/ProcessGroupNCCL.cpp:825, invalid argument, NCCL version 2.7.8",
				"ncclInvalidArgument: Invalid value for an argument.",
			}
		default: // a C++ frontend that throws NCCL's result code
			code := 4 + r.Intn(2)
			return []string{"terminate called after throwing an instance of 'std::runtime_error'", fmt.Sprintf("  what():  NCCL Error %d: invalid %s", code, map[int]string{4: "argument", 5: "usage"}[code])}
		}
	}},
	{"error.roce-gid-index-wrong", func(r *rand.Rand, host string, rank, dev int) []string {
		p := ncclPrefix(host, rank, dev)
		if r.Intn(2) == 0 { // v2.18 ibvwrap.cc: "Call to " name " failed with error %s"
			return []string{p + " misc/ibvwrap.cc:262 NCCL WARN Call to ibv_modify_qp failed with error Invalid argument"}
		}
		// v2.27 ibvwrap.cc: "Call to ibv_modify_qp failed with %d %s, %s"
		return []string{p + fmt.Sprintf(" misc/ibvwrap.cc:301 NCCL WARN Call to ibv_modify_qp failed with 22 Invalid argument, on dev mlx5_%d:1, curr state INIT, next state RTR, local GID index %d, local GID ::ffff:10.20.0.10, remote GID ::ffff:10.20.1.11", dev%2, r.Intn(8))}
	}},
	{"error.shm-removed-by-systemd", func(r *rand.Rand, host string, rank, dev int) []string {
		// v2.18 shmutils.cc "unlink shared memory %s failed, error: %s";
		// v2.27 adds " (%d)"
		suffix := []string{"", " (2)"}[r.Intn(2)]
		return []string{ncclPrefix(host, rank, dev) + fmt.Sprintf(" misc/shmutils.cc:%d NCCL WARN unlink shared memory /dev/shm/nccl-%06x failed, error: No such file or directory%s", 95+r.Intn(80), r.Intn(1<<24), suffix)}
	}},
	{"error.fd-limit", func(r *rand.Rand, host string, rank, dev int) []string {
		// v2.18 socket.cc "ncclSocketInit: Socket creation failed : %s"
		return []string{ncclPrefix(host, rank, dev) + " misc/socket.cc:723 NCCL WARN ncclSocketInit: Socket creation failed : Too many open files"}
	}},
	{"error.mpi-pmix-gds-lock", func(r *rand.Rand, host string, rank, dev int) []string {
		return []string{fmt.Sprintf("[%s:%d] PMIX ERROR: ERROR in file gds_ds12_lock_pthread.c at line %d", host, 40000+rank, 100+r.Intn(100))}
	}},
	{"error.ucx-net-device-unavailable", func(r *rand.Rand, host string, rank, dev int) []string {
		return []string{fmt.Sprintf("[1732800000.%06d] [%s:%d:0]     ucp_context.c:1023 UCX  WARN  network device 'mlx5_%d:1' is not available, please use one or more of: 'eth0'(tcp), 'lo'(tcp)", r.Intn(1000000), host, 40000+rank, 4+dev)}
	}},
	{"error.ucx-no-am-transport", func(r *rand.Rand, host string, rank, dev int) []string {
		return []string{
			fmt.Sprintf("[%s:%d:0:%d]      select.c:434  UCX  ERROR   no active messages transport to <no debug data>: Unsupported operation", host, 40000+rank, 40000+rank),
			fmt.Sprintf("Error: Failed to resolve UCX endpoint for rank %d", rank),
		}
	}},
	{"error.mnnvl-imex-not-working", func(r *rand.Rand, host string, rank, dev int) []string {
		p := ncclPrefix(host, rank, dev)
		n := 2 + r.Intn(71)
		switch r.Intn(3) {
		case 0: // v2.27 mnnvl.cc: no FABRIC handle
			return []string{p + fmt.Sprintf(" mnnvl.cc:63 NCCL WARN MNNVL (cliqueSize %d) is available but not working on this system. Check the IMEX channel configuration (/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.", n)}
		case 1: // v2.27 mnnvl.cc: export or import failed
			return []string{p + fmt.Sprintf(" mnnvl.cc:74 NCCL WARN MNNVL (cliqueSize %d) is available but not working on this system. Check the IMEX configuration (nvidia-imex-ctl -N). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.", n)}
		default: // v2.25 mnnvl.cc
			return []string{p + fmt.Sprintf(" mnnvl.cc:69 NCCL WARN MNNVL (cliqueSize %d) is available but not supported on this system. Check the IMEX configuration.", n)}
		}
	}},
	{"error.nvlink-p2p-disabled", func(r *rand.Rand, host string, rank, dev int) []string {
		// src/graph/paths.cc v2.12 to v2.30, then the error trace
		p := ncclPrefix(host, rank, dev)
		a, b := dev, (dev+1+r.Intn(7))%8
		return []string{
			p + fmt.Sprintf(" graph/paths.cc:%d NCCL WARN P2P is disabled between NVLINK connected GPUs %d and %d. This should not be the case given their connectivity, and is probably due to a hardware issue. If you still want to proceed, you can set NCCL_IGNORE_DISABLED_P2P=1.", 300+r.Intn(100), a, b),
			p + fmt.Sprintf(" NCCL INFO graph/paths.cc:%d -> 1", 600+r.Intn(100)),
		}
	}},
	{"error.socket-connect-failed", func(r *rand.Rand, host string, rank, dev int) []string {
		p := ncclPrefix(host, rank, dev)
		peer := fmt.Sprintf("10.20.%d.%d<%d>", r.Intn(8), 10+r.Intn(8), 30000+r.Intn(30000))
		// a refusal that names the refusing address names its node first
		// (nccl.peer-refuses, peerrefused_test.go): here timeouts, and
		// refusals in the words of the releases that name no address
		switch r.Intn(5) {
		case 0: // v2.12 socket.cc
			return []string{p + " misc/socket.cc:456 NCCL WARN Net : Connect to " + peer + " failed : Connection timed out"}
		case 4: // v2.24 to v2.26 socket.cc, no address
			return []string{p + " misc/socket.cc:543 NCCL WARN socketPollConnect: connect returned Connection refused, exceeded error retry count (35)"}
		case 1: // v2.17 to v2.19 socket.cc, after the retries
			return []string{p + fmt.Sprintf(" misc/socket.cc:%d NCCL WARN socket%sConnect: exceeded %s (%d)", 460+r.Intn(60), []string{"Start", "Poll"}[r.Intn(2)], []string{"retries", "timeouts"}[r.Intn(2)], 20+r.Intn(100))}
		case 2: // the same, with the connect error of v2.17 to v2.19
			return []string{p + " misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to " + peer + " failed : Connection timed out"}
		default: // v2.27 and later
			return []string{p + fmt.Sprintf(" misc/socket.cc:288 NCCL WARN ncclSocketConnect: connect to %s returned Connection timed out, exceeded error retry count after %d attempts", peer, 35)}
		}
	}},
	{"error.cuda-ipc-host-name-collision", func(r *rand.Rand, host string, rank, dev int) []string {
		// src/transport/p2p.cu to v2.4.2-1: cudaIpcOpenMemHandle failed
		// (any CUDA error but 217); NCCL before 2.3 printed no "NCCL " tag
		codes := []string{"30 unknown error", "1 invalid argument", "201 invalid device context", "14 mapping of buffer object failed", "999 unknown error"}
		tag := []string{"WARN", "NCCL WARN"}[r.Intn(2)]
		return []string{ncclPrefix(host, rank, dev) + fmt.Sprintf(" transport/p2p.cu:%d %s failed to open CUDA IPC handle : %s", 400+r.Intn(200), tag, codes[r.Intn(len(codes))])}
	}},
	{"error.topo-sys-pci-path-missing", func(r *rand.Rand, host string, rank, dev int) []string {
		// src/graph/xml.cc getPciPath, then the error trace
		p := ncclPrefix(host, rank, dev)
		bus := fmt.Sprintf("%04x:%02x", r.Intn(2), r.Intn(256))
		return []string{
			p + fmt.Sprintf(" graph/xml.cc:%d NCCL WARN Could not find real path of /sys/class/pci_bus/%s/../../%s:%02x.0", 400+r.Intn(300), bus, bus, r.Intn(32)),
			p + fmt.Sprintf(" NCCL INFO graph/xml.cc:%d -> 2", 600+r.Intn(100)),
		}
	}},
	{"error.ras-dead", func(r *rand.Rand, host string, rank, dev int) []string {
		// ncclras -m (NCCL 2.29 and later), src/ras/client_support.cc
		// "[%s] %s: %s %s": the peer as a process, or as an address with
		// rasnet.cc's details
		ts := fmt.Sprintf("[2025-12-19 13:%02d:%02d] ", r.Intn(60), r.Intn(60))
		if r.Intn(2) == 0 {
			return []string{ts + fmt.Sprintf("PEER_DEAD: Process %d on node 10.20.%d.10 managing GPU %d", 40000+rank, r.Intn(8), dev)}
		}
		return []string{ts + fmt.Sprintf("PEER_TIMEOUT_DEAD: 10.20.%d.10<%d> peer failed to respond for %ds, declaring dead", r.Intn(8), 28028+r.Intn(1000), 60+r.Intn(30))}
	}},
}

// jobWith is a job of n ranks over the hosts whose bad ranks print the
// signature's lines after their startup lines.
func jobWith(r *rand.Rand, c docSignatureCase, n, hosts int, bad []int) []string {
	var out []string
	for rank := range n {
		h := rank % hosts
		host := fmt.Sprintf("node%03d", h+1)
		out = append(out, startup(host, rank, rank/hosts, h, "2.21.5")...)
	}
	for _, rank := range bad {
		h := rank % hosts
		out = append(out, c.line(r, fmt.Sprintf("node%03d", h+1), rank, rank/hosts)...)
	}
	return out
}

// Any rank count, any host count, any share of failing ranks, any prefix
// (real ones and random ones): the documented line ranks its cause first.
func TestDocSignaturesAnyRanksAnyPrefix(t *testing.T) {
	firstAnyRanksAnyPrefix(t, rand.New(rand.NewSource(2307)), docSignatureCases, 3)
}

// firstAnyRanksAnyPrefix checks, reps times for each case and prefix, that
// a job of random rank and host counts with a random share of ranks
// printing the case's line ranks the case's cause first.
func firstAnyRanksAnyPrefix(t *testing.T, r *rand.Rand, cases []docSignatureCase, reps int) {
	t.Helper()
	for _, c := range cases {
		for _, pre := range causePrefixes(r) {
			for range reps {
				hosts := 1 + r.Intn(8)
				n := hosts * (1 + r.Intn(8))
				k := 1 + r.Intn(n)
				bad := r.Perm(n)[:k]
				slices.Sort(bad)
				text := prefixed(pre, jobWith(r, c, n, hosts, bad))
				a := analyseText(text)
				if got := topCause(a); got != c.id {
					t.Fatalf("%s: %d ranks on %d hosts, %d failing, behind %q: first %q (%s)\n%s", c.id, n, hosts, k, pre, got, flagIDs(a), text)
				}
			}
		}
	}
}

// A paste of the failing lines alone (a traceback, a launcher's output)
// is read as error lines and names the cause.
func TestDocSignaturesLinesAlone(t *testing.T) {
	r := rand.New(rand.NewSource(2308))
	for _, c := range docSignatureCases {
		for _, pre := range causePrefixes(r) {
			lines := c.line(r, "node001", 0, 0)
			if got := topCause(analyseText(prefixed(pre, lines))); got != c.id {
				t.Errorf("%s behind %q: first %q", c.id, pre, got)
			}
		}
	}
}

// Lines that share words with the documented ones but name another cause,
// or no failure, raise none of them.
func TestDocSignaturesDoNotFire(t *testing.T) {
	p := ncclPrefix("node001", 0, 0)
	for name, tc := range map[string]struct {
		lines []string
		not   string
		first string
	}{
		"CUDA's own invalid argument":  {[]string{p + " transport.cc:154 NCCL WARN Cuda failure 'invalid argument'"}, "error.nccl-invalid-usage", "error.cuda-failure"},
		"nccl-tests' own NCCL failure": {[]string{"node001: Test NCCL failure common.cu:959 'invalid usage (run with NCCL_DEBUG=WARN for details)'"}, "error.nccl-invalid-usage", ""},
		"two ranks on one GPU": {[]string{p + " init.cc:872 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000",
			"torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3"}, "", "error.duplicate-gpu"},
		"QP timeout":                            {[]string{p + " misc/ibvwrap.cc:301 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:10.0.0.1, remote GID ::ffff:10.0.0.2"}, "error.roce-gid-index-wrong", "error.ib-qp-timeout"},
		"another call's invalid argument":       {[]string{p + " misc/ibvwrap.cc:190 NCCL WARN Call to ibv_reg_mr failed with error Invalid argument"}, "error.roce-gid-index-wrong", ""},
		"NCCL 2.27's unlink INFO":               {[]string{p + " NCCL INFO unlink shared memory /dev/shm/nccl-3fa1b2 failed, error: No such file or directory (2)"}, "error.shm-removed-by-systemd", ""},
		"another PMIx error":                    {[]string{"[node001:4242] PMIX ERROR: UNREACHABLE in file server/pmix_server.c at line 2795"}, "error.mpi-pmix-gds-lock", ""},
		"another UCX warning":                   {[]string{"[1732800000.123456] [node001:4242:0]          parser.c:1918 UCX  WARN  unused env variable: UCX_HOME (set UCX_WARN_UNUSED_ENV_VARS=n to suppress this warning)"}, "error.ucx-net-device-unavailable", ""},
		"P2P off between PCIe GPUs":             {[]string{p + " NCCL INFO P2P is disabled between connected GPUs 1 and 0. You can repress this message with NCCL_IGNORE_DISABLED_P2P=1."}, "error.nvlink-p2p-disabled", ""},
		"a retried connect that went on":        {[]string{p + " NCCL INFO ncclSocketConnect: connect to 10.20.1.11<40123> returned Connection refused, retrying (1/34) after sleep for 100 msec"}, "error.socket-connect-failed", ""},
		"CUDA IPC without peer access":          {[]string{p + " transport/p2p.cu:547 NCCL WARN failed to open CUDA IPC handle : 217 peer access is not supported between these two devices"}, "error.cuda-ipc-host-name-collision", "error.nccl-peer-access-unsupported"},
		"CUDA IPC failing from NCCL 2.4.6 on":   {[]string{p + " transport/p2p.cc:237 NCCL WARN failed to open CUDA IPC handle : 30 unknown error"}, "error.cuda-ipc-host-name-collision", ""},
		"a container bridge peer":               {append(startup("node001", 0, 0, 0, "2.18.6"), p+" misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 172.17.0.2<40123> failed : Connection refused"), "", "nccl.peer-other-network"},
		"a soft-RoCE device without a PCI path": {[]string{p + " transport/net_ib.cc:115 NCCL WARN Could not find real path of rxe0 (/sys/class/infiniband/rxe0/device)"}, "error.topo-sys-pci-path-missing", ""},
		"a RAS peer joining":                    {[]string{"[2025-12-19 13:07:07] PEER_NEW: Process 1524345 on node 172.16.64.245 managing GPU 1"}, "error.ras-dead", ""},
		"MNNVL in use":                          {append(startup("node001", 0, 0, 0, "2.27.7"), p+" NCCL INFO MNNVL 1 cliqueId 7f cliqueSize 4 cliqueRank 0 nvlDomainSize 4"), "error.mnnvl-imex-not-working", ""},
	} {
		a := analyseText(prefixed("", tc.lines))
		if tc.not != "" && hasFlag(a, tc.not) {
			t.Errorf("%s: %s raised (%s)", name, tc.not, flagIDs(a))
		}
		if tc.first != "" && topCause(a) != tc.first {
			t.Errorf("%s: first %q, want %q (%s)", name, topCause(a), tc.first, flagIDs(a))
		}
	}
}

// docSignatureFixtures are the fixtures whose lines carry a documented
// signature; no other file under testdata (the held-out half of the field
// corpus is not read) raises one.
var docSignatureFixtures = map[string]bool{
	"field-cases/06_interleaved_traceback_duplicate_gpu.txt":                           true,
	"field-cases/07_traceback_duplicate_gpu_default_device.txt":                        true,
	"field/train/06_interleaved_traceback_duplicate_gpu.txt":                           true,
	"field/train/07_traceback_duplicate_gpu_default_device.txt":                        true,
	"field/train/105_rank_prefixed_traceback_duplicate_gpu_ep.txt":                     true,
	"field/train/114_vllm_nccl_invalid_config_blocking_attribute.txt":                  true,
	"field/train/172_lightning_ddp_noncontiguous_gpus_barrier_invalid_usage.txt":       true,
	"field/train/178_pytorch_dataparallel_nccl256_error4_invalid_argument.txt":         true,
	"field/train/264_slurm_peer_node_network_broken_nccl_connect_refused.txt":          true,
	"field/train/340_horovod_same_hostname_cuda_ipc_handle.txt":                        true,
	"field/train/363_slurm_broken_node_nccl_warn_connect_refused.txt":                  true,
	"nccl-faults/duplicate-gpu.log":                                                    true,
	"nccl-faults/net-ib-forced.log":                                                    true,
	"nccl-faults/socket-ifname-missing.log":                                            true,
	"field/train/53_ray_workers_duplicate_gpu_traceback.txt":                           true,
	"field/train/96_megatron_traceback_duplicate_gpu_f000.txt":                         true,
	"field/train/369_switched_fabric_second_hca_no_ipv4_gid_mismatch_modify_qp_22.txt": true,
}

func TestDocSignaturesNothingNewOnFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, docSignatureIDs, docSignatureFixtures)
}

// noneRaisedOnFixtures reads every file under testdata but those listed in
// carriers (the held-out part of the field corpus and the golden analyses
// are not read) and fails where one raises any of ids.
func noneRaisedOnFixtures(t *testing.T, ids []string, carriers map[string]bool) {
	t.Helper()
	err := filepath.WalkDir("testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata", path)
		if d.IsDir() {
			if rel == filepath.Join("field", "holdout") || rel == "golden" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".SOURCE") || strings.HasSuffix(path, ".gz") || carriers[filepath.ToSlash(rel)] {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		a := Reader(path, f, Options{})
		for _, id := range ids {
			if hasFlag(a, id) {
				t.Errorf("%s: %s raised", rel, id)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
