package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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

// Qualification of a healthy pair's two RoCE rails through stand-ins that
// replay NVIDIA's recorded ib_write_bw outputs (one per twin): four
// directions, each judged against the 96 Gb/s one twin should give.
func TestQualifyRDMAWithStandins(t *testing.T) {
	bin := standins(t, nil, "ib_write_bw")
	s := session(t, port0Pair(), Options{Kinds: []string{KindQualify}, QualifyRDMA: true, Tools: Tools{Perftest: bin}, Duration: time.Second})
	rec := s.Run(context.Background())
	q := Qualify(rec, 96, "seed 001")
	var got []string
	for _, d := range q.Directions {
		got = append(got, fmt.Sprintf("%s %s→%s %.2f %s", d.Tool, d.From, d.To, d.Gbps, d.Verdict))
	}
	want := []string{
		"ib_write_bw spark-1:enp1s0f0np0→spark-2:enp1s0f0np0 92.57 pass",
		"ib_write_bw spark-2:enp1s0f0np0→spark-1:enp1s0f0np0 92.57 pass",
		"ib_write_bw spark-1:enP2p1s0f0np0→spark-2:enP2p1s0f0np0 97.28 pass",
		"ib_write_bw spark-2:enP2p1s0f0np0→spark-1:enP2p1s0f0np0 97.28 pass",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if len(q.Findings) != 0 {
		t.Errorf("findings on a healthy pair: %+v", q.Findings)
	}
	// The same rates against a 200 Gb/s expectation: every direction slow, named.
	q = Qualify(rec, 200, "")
	if len(q.Findings) != 4 || q.Findings[0].ID != "link.degraded" || !strings.Contains(q.Findings[0].Observed, "92.6 Gb/s, 46 % of expected (200.0 Gb/s)") {
		t.Errorf("against 200 Gb/s: %+v", q.Findings)
	}
}
