package results

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// Property: the NET/IB device list and GIDs read with ibUsing's memo of
// the last "Using" line and netIB's and gid's of the last per-device and
// QP lines are those read without them, whatever mix of "Using" lines,
// per-device speed lines (changed or repeated speeds, new names, other
// links, merged devices) and QP lines a log prints in whatever order,
// each line new or one of the last few again.
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
			switch rng.IntN(5) {
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
				line = host + "NET/IB : Using " + strings.Join(devs, " ") + "; OOB enp1s0f1np1:192.168.100.16<0>"
			}
			last = append(last, line)[max(0, len(last)-5):]
			memo.Observe([]byte(line))
			// no memo: every line read whole
			plain.usingDevs, plain.speeds, plain.gids = nil, recentRead[int]{}, recentRead[struct{}]{}
			plain.Observe([]byte(line))
			if !reflect.DeepEqual(memo.IBDevices, plain.IBDevices) || memo.RelaxedOrdering != plain.RelaxedOrdering || memo.OOB != plain.OOB {
				t.Fatalf("line %d %q: with the memo %+v, without %+v", k, line, memo.IBDevices, plain.IBDevices)
			}
			if !reflect.DeepEqual(memo.GIDs, plain.GIDs) {
				t.Fatalf("line %d %q: with the memo GIDs %+v, without %+v", k, line, memo.GIDs, plain.GIDs)
			}
		}
	}
}
