package results

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// Property: the NET/IB device list and GIDs read with ibUsing's memo of
// the last "Using" lines and netIB's and gid's of the last per-device,
// GPU Direct RDMA and QP lines are those read without them, whatever mix
// of "Using" lines (with either host's OOB), per-device speed lines
// (changed or repeated speeds, new names, other links, merged devices),
// GPU Direct RDMA and QP lines a log prints in whatever order, each line
// new or one of the last few again.
func TestIBUsingMemoProperty(t *testing.T) {
	names := []string{"rocep1s0f1", "roceP2p1s0f1", "mlx5_0", "mlx5_1"}
	speeds := []int{200000, 200000, 100000, 400000}
	rng := rand.New(rand.NewPCG(36, 3))
	for range 500 {
		var memo, plain NCCLLog
		var last []string
		for k := range 1 + rng.IntN(40) {
			var line string
			host := fmt.Sprintf("spark-%d:%d:%d [0] NCCL INFO ", rng.IntN(2), 100+rng.IntN(2), 100)
			switch rng.IntN(6) {
			case 5:
				how := []string{"Disabled for HCA", "Enabled for HCA", "(DMABUF) enabled for HCA"}[rng.IntN(3)]
				line = host + fmt.Sprintf("NET/IB : GPU Direct RDMA %s %d '%s'", how, rng.IntN(2), names[rng.IntN(len(names))])
			case 0:
				if len(last) > 0 {
					line = last[rng.IntN(len(last))]
					break
				}
				fallthrough
			case 1:
				line = host + fmt.Sprintf("NET/IB: NCCL Dev %d IbDev %d Port 1 qpn 576 mtu %d GID %d (0/1064A8C0FFFF0000) fifoRkey=0x1b9e9c", rng.IntN(2), rng.IntN(2), 3+2*rng.IntN(2), rng.IntN(4))
			case 2:
				n := names[rng.IntN(len(names))]
				line = host + fmt.Sprintf("NET/IB: [%d] %s:uverbs%d:1/RoCE provider=Mlx5 speed=%d context=0x1 ar=0", rng.IntN(4), n, rng.IntN(4), speeds[rng.IntN(len(speeds))])
			default:
				var devs []string
				for j := range 1 + rng.IntN(3) {
					link := "RoCE"
					if rng.IntN(5) == 0 {
						link = "IB"
					}
					devs = append(devs, fmt.Sprintf("[%d]%s:1/%s", j, names[rng.IntN(len(names))], link))
				}
				if rng.IntN(2) == 0 {
					devs = append(devs, "[RO]")
				}
				if rng.IntN(6) == 0 {
					devs = []string{fmt.Sprintf("[0]{%s,%s}={%s:1/RoCE,%s:1/RoCE}", names[0], names[1], names[0], names[1])}
				}
				line = host + "NET/IB : Using " + strings.Join(devs, " ") + fmt.Sprintf("; OOB enp1s0f1np1:192.168.100.%d<0>", 15+rng.IntN(2))
			}
			last = append(last, line)[max(0, len(last)-5):]
			memo.Observe([]byte(line))
			// no memo: every line read whole
			plain.usingDevs, plain.usings, plain.speeds = nil, [2]usingLine{}, recentRead[int]{}
			plain.gids, plain.gdrLines = recentRead[struct{}]{}, recentRead[struct{}]{}
			plain.Observe([]byte(line))
			if !reflect.DeepEqual(memo.IBDevices, plain.IBDevices) || memo.RelaxedOrdering != plain.RelaxedOrdering || memo.OOB != plain.OOB {
				t.Fatalf("line %d %q: with the memo %+v, without %+v", k, line, memo.IBDevices, plain.IBDevices)
			}
			if !reflect.DeepEqual(memo.GIDs, plain.GIDs) {
				t.Fatalf("line %d %q: with the memo GIDs %+v, without %+v", k, line, memo.GIDs, plain.GIDs)
			}
			if !reflect.DeepEqual(memo.GDRDisabledHCAs, plain.GDRDisabledHCAs) || !reflect.DeepEqual(memo.GDREnabledHCAs, plain.GDREnabledHCAs) {
				t.Fatalf("line %d %q: with the memo GDR HCAs %q %q, without %q %q", k, line, memo.GDRDisabledHCAs, memo.GDREnabledHCAs, plain.GDRDisabledHCAs, plain.GDREnabledHCAs)
			}
		}
	}
}

// Property: a NET channel line's "[receive]", looked for just before
// " via " first, is found where a search of the whole message finds it:
// lines with "[receive]", "[send]" or neither, before or after " via ",
// with and without GPUDirect RDMA, counted alike.
func TestNetGDRReceiveBeforeVia(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 11))
	marks := []string{"", "[receive] ", "[send] ", "[receive]", "receive] "}
	for range 2000 {
		var at, whole NCCLLog
		at.lastHost, whole.lastHost = []byte("spark-1"), []byte("spark-1")
		for range 1 + rng.IntN(8) {
			msg := fmt.Sprintf("Channel %02d/0 : 0[0] -> 1[0] %svia NET/IB/%d%s%s", rng.IntN(4), marks[rng.IntN(len(marks))],
				rng.IntN(2), []string{"", "/GDRDMA"}[rng.IntN(2)], []string{"", " [receive]", " x"}[rng.IntN(3)])
			j := index([]byte(msg), " via ")
			tr := bytes.TrimSpace([]byte(msg)[j+5:])
			at.netGDRLine([]byte(msg), j, tr)
			whole.netGDRLine([]byte(msg), -1, tr) // no " via " known: the whole message searched
			if !reflect.DeepEqual(at.netGDR, whole.netGDR) {
				t.Fatalf("%q: %+v, searching the whole message %+v", msg, at.netGDR, whole.netGDR)
			}
		}
	}
}
