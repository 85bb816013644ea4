package bench

import (
	"strings"
	"testing"
)

// One twin idle in an NCCL step: the RDMA port counters of spark-1's two
// twins moved 99.5 % / 0.5 % (the split christopherowen/dgx-spark-networking
// measured on a stock ring's two directions), and the flag names the twin.
func TestTrafficShareFlagsAnIdleTwin(t *testing.T) {
	plan := &Plan{Rails: []Rail{
		{Name: "rail0", A: Endpoint{Host: "spark-1", NetDev: "enp1s0f1np1", RDMADev: "rocep1s0f1", Port: 1}, B: Endpoint{Host: "spark-2", NetDev: "enp1s0f1np1", RDMADev: "rocep1s0f1", Port: 1}},
		{Name: "rail1", A: Endpoint{Host: "spark-1", NetDev: "enP2p1s0f1np1", RDMADev: "roceP2p1s0f1", Port: 1}, B: Endpoint{Host: "spark-2", NetDev: "enP2p1s0f1np1", RDMADev: "roceP2p1s0f1", Port: 1}},
	}}
	words := func(bytes uint64) uint64 { return bytes / 4 }
	res := StepResult{Counters: []Counter{
		{Host: "spark-1", Dev: "rocep1s0f1/1", Name: "port_xmit_data", Before: 0, After: words(995 << 20)},
		{Host: "spark-1", Dev: "roceP2p1s0f1/1", Name: "port_xmit_data", Before: 0, After: words(5 << 20)},
		{Host: "spark-2", Dev: "rocep1s0f1/1", Name: "port_rcv_data", Before: 0, After: words(995 << 20)},
		{Host: "spark-2", Dev: "roceP2p1s0f1/1", Name: "port_rcv_data", Before: 0, After: words(5 << 20)},
		// the netdev counters hardly move under RoCE
		{Host: "spark-1", Dev: "enp1s0f1np1", Name: "tx_bytes", Before: 100, After: 4196},
	}}
	shares := trafficShare(plan, &res)
	if len(shares) != 4 || shares[0].Source != "rdma" || shares[0].TxBytes != 995<<20 || shares[1].TxShare != 0.005 {
		t.Fatalf("shares %+v", shares)
	}
	flags := shareFlags(Step{Kind: KindNCCL}, shares)
	if len(flags) != 2 || flags[0].Message != "enP2p1s0f1np1 sent 0.5 % of spark-1's bytes: NCCL used the other rail(s), not this one" ||
		!strings.Contains(flags[1].Message, "enP2p1s0f1np1 received 0.5 % of spark-2's bytes") {
		t.Errorf("flags %+v", flags)
	}
	// A single-rail step (ib_write_bw on one twin) is not judged for balance.
	if f := shareFlags(Step{Kind: KindRDMA, Rails: []string{"rail0"}}, shares); len(f) != 0 {
		t.Errorf("single-rail step flagged: %+v", f)
	}
}
