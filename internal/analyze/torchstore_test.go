package analyze

import (
	"fmt"
	"math/rand"
	"testing"
)

// torchStoreCase builds the lines PyTorch prints when a rank cannot reach
// rank 0's c10d TCPStore: socket.cpp's SocketConnectOp::throwTimeoutError
// ("The client socket has timed out after {} while trying to connect to
// ({}, {}).", logged by C10D_ERROR and raised as DistNetworkError) and
// ProcessGroupNCCL.cpp's broadcastUniqueNCCLID ("[%d] is setting up NCCL
// communicator and retrieving ncclUniqueId from [0] via c10d key-value
// store by key '%s', but store->get('%s') got error: %s").
var torchStoreCase = docSignatureCase{"error.torch-store-unreachable", func(r *rand.Rand, host string, rank, dev int) []string {
	addr := fmt.Sprintf("10.20.0.%d", 10+r.Intn(200))
	port := 29500 + r.Intn(30000)
	after := []string{"600000ms", "900s", "30min", "1800s"}[r.Intn(4)]
	switch r.Intn(5) {
	case 0: // PyTorch 2.x: the c10d log line, then the exception
		msg := fmt.Sprintf("The client socket has timed out after %s while trying to connect to (%s, %d).", after, addr, port)
		return []string{
			fmt.Sprintf("[E1128 10:%02d:%02d.%06d %d socket.cpp:%d] [c10d] %s", r.Intn(60), r.Intn(60), r.Intn(1000000), 4000+rank, 900+r.Intn(200), msg),
			"torch.distributed.DistNetworkError: " + msg,
		}
	case 1: // the exception alone, as a traceback's last line
		return []string{fmt.Sprintf("torch.distributed.DistNetworkError: The client socket has timed out after %s while trying to connect to (%s, %d).", after, addr, port)}
	case 2: // every address refused or unreachable, or rank 0's store waiting for the others
		if r.Intn(2) == 0 {
			return []string{fmt.Sprintf("RuntimeError: The client socket has failed to connect to any network address of (%s, %d). The client socket has failed to connect to [%s]:%d (errno: 113 - No route to host).", addr, port, addr, port)}
		}
		return []string{fmt.Sprintf("torch.distributed.DistStoreError: Timed out after %d seconds waiting for clients. %d/%d clients joined.", 300+r.Intn(1500), 1+r.Intn(3), 4+r.Intn(60))}
	default: // the unique id never fetched from the store
		key := fmt.Sprint(r.Intn(4))
		why := []string{"Socket Timeout", "Connection reset by peer", "Broken pipe", fmt.Sprintf("wait timeout after %dms", 1000*(10+r.Intn(600)))}[r.Intn(4)]
		return []string{fmt.Sprintf("torch.distributed.DistBackendError: [%d] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '%s', but store->get('%s') got error: %s. This may indicate a possible application crash on rank 0 or a network set up issue.", rank, key, key, why)}
	}
}}

// torchPortInUseCase is rank 0's store failing to listen: socket.cpp's
// SocketListenOp ("The server socket has failed to bind to {} {}." per
// address after "...failed to listen on any local network address.") or the
// libuv store's one line with the errno's name.
var torchPortInUseCase = docSignatureCase{"error.torch-store-port-in-use", func(r *rand.Rand, host string, rank, dev int) []string {
	port := 29500 + r.Intn(30000)
	if r.Intn(2) == 0 {
		return []string{fmt.Sprintf("RuntimeError: The server socket has failed to listen on any local network address. The server socket has failed to bind to [::]:%d (errno: 98 - Address already in use). The server socket has failed to bind to 0.0.0.0:%d (errno: 98 - Address already in use).", port, port)}
	}
	return []string{fmt.Sprintf("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: %d, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use", port)}
}}

// torchWatchdogStuckCase is ProcessGroupNCCL's heartbeat monitor ending a
// process whose watchdog made no progress (its ERROR, then its FATAL line).
var torchWatchdogStuckCase = docSignatureCase{"error.torch-watchdog-stuck", func(r *rand.Rand, host string, rank, dev int) []string {
	ts := fmt.Sprintf("1128 10:%02d:%02d.%06d %d", r.Intn(60), r.Intn(60), r.Intn(1000000), 4000+rank)
	secs := []int{480, 600, 1200}[r.Intn(3)]
	return []string{
		fmt.Sprintf("[rank%d]:[E%s ProcessGroupNCCL.cpp:%d] [PG ID 0 PG GUID 0(default_pg) Rank %d] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=%d", rank, ts, 1300+r.Intn(300), rank, r.Intn(4)),
		fmt.Sprintf("[rank%d]:[F%s ProcessGroupNCCL.cpp:%d] [PG ID 0 PG GUID 0(default_pg) Rank %d] ProcessGroupNCCL's watchdog got stuck for %d seconds without making progress in monitoring enqueued collectives. This typically indicates a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog.", rank, ts, 1500+r.Intn(300), rank, secs),
	}
}}

var torchCases = []docSignatureCase{torchStoreCase, torchPortInUseCase, torchWatchdogStuckCase}

// Any rank count, host count, share of failing ranks and prefix: the
// documented line ranks its cause first.
func TestTorchStoreAnyRanksAnyPrefix(t *testing.T) {
	firstAnyRanksAnyPrefix(t, rand.New(rand.NewSource(3601)), torchCases, 4)
}

// The lines alone (a traceback's tail) are read as error lines and name it.
func TestTorchStoreLinesAlone(t *testing.T) {
	r := rand.New(rand.NewSource(3602))
	for _, c := range torchCases {
		for _, pre := range causePrefixes(r) {
			for range 4 {
				lines := c.line(r, "node001", r.Intn(16), 0)
				if got := topCause(analyseText(prefixed(pre, lines))); got != c.id {
					t.Errorf("%q behind %q: first %q", lines, pre, got)
				}
			}
		}
	}
}

// Lines that share words with the store's failures but are not one raise
// nothing of it; a cause NCCL names itself still ranks first.
func TestTorchStoreDoesNotFire(t *testing.T) {
	p := ncclPrefix("node001", 0, 0)
	for name, tc := range map[string]struct {
		lines []string
		first string
		also  string // a later cause these lines also show
	}{
		"the server socket retrying":  {[]string{"[W1128 10:00:00.000000 4242 socket.cpp:663] [c10d] The server socket on [::ffff:10.20.0.11]:25000 has timed out, will retry."}, "", ""},
		"a client that connected":     {[]string{"[I1128 10:00:00.000000 4242 socket.cpp:787] [c10d] The client socket has connected to [node001]:29500 on [node002]:40312."}, "", ""},
		"the store served the id":     {[]string{"[I1128 10:00:00.000000 4242 ProcessGroupNCCL.cpp:2100] [PG 0 Rank 1] ProcessGroupNCCL broadcast unique ID through store took 12.5 ms"}, "", ""},
		"NCCL's own socket timeout":   {[]string{p + " misc/socket.cc:484 NCCL WARN socketStartConnect: exceeded timeouts (35)"}, "error.socket-connect-failed", ""},
		"an address not on this host": {[]string{"RuntimeError: The server socket has failed to listen on any local network address. The server socket has failed to bind to 10.20.0.99:29500 (errno: 99 - Cannot assign requested address)."}, "", ""},
		"the listening store":         {[]string{"[I1128 10:00:00.000000 4242 socket.cpp:884] [c10d] The server socket has started to listen on [::]:29500."}, "", ""},
		"a collective timed out, then the monitor": {[]string{
			"[rank1]:[E1128 10:12:03.123456 4243 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600039 milliseconds before timing out.",
			"[rank1]:[E1128 10:22:03.123456 4243 ProcessGroupNCCL.cpp:1316] [PG 0 Rank 1] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=1",
		}, "error.torch-watchdog-timeout", "error.torch-watchdog-stuck"},
	} {
		a := analyseText(prefixed("", tc.lines))
		for _, c := range torchCases {
			if c.id != tc.first && c.id != tc.also && hasFlag(a, c.id) {
				t.Errorf("%s: %s raised (%s)", name, c.id, flagIDs(a))
			}
		}
		if tc.first != "" && topCause(a) != tc.first {
			t.Errorf("%s: first %q, want %q (%s)", name, topCause(a), tc.first, flagIDs(a))
		}
	}
}

// No file under testdata carries a PyTorch store, port or heartbeat
// failure, so none raises one (the held-out part of the field corpus is
// not read).
func TestTorchStoreNothingNewOnFixtures(t *testing.T) {
	var ids []string
	for _, c := range torchCases {
		ids = append(ids, c.id)
	}
	noneRaisedOnFixtures(t, ids, torchStoreCarriers)
}

// torchStoreCarriers are the fixtures where a rank does fail to read the store:
// in 284 rank 1's store read is reset after rank 0 died on its NCCL init.
var torchStoreCarriers = map[string]bool{
	"field/train/284_socket_ifname_down_interface_no_socket_interface_found.txt": true,
}
