package analyze

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// slingshotSocketJob is a job of nodes×local ranks whose NCCL found no net
// plugin (release 2.<release>'s words) and fell back to its socket network
// over Slingshot interfaces, each rank printing its startup and a NET
// channel to the next node; env is NCCL_SOCKET_IFNAME's value ("" unset),
// ifs the socket list's interfaces.
func slingshotSocketJob(r *rand.Rand, release, nodes, local int, env string, ifs []string, plugin []string) []string {
	var out []string
	n := nodes * local
	for rank := range n {
		node := rank / local
		p := ncclPrefix(fmt.Sprintf("nid%06d", 5471+node*16), rank, rank%local) + " NCCL INFO "
		if env != "" {
			out = append(out, p+"NCCL_SOCKET_IFNAME set by environment to "+env)
		}
		out = append(out, p+fmt.Sprintf("Bootstrap : Using %s:10.100.%d.%d<0>", ifs[0], node, 10+rank%local))
		for _, l := range plugin {
			out = append(out, p+l)
		}
		var list []string
		for i, name := range ifs {
			list = append(list, fmt.Sprintf("[%d]%s:10.10%d.%d.%d<0>", i, name, i, node, 10+rank%local))
		}
		out = append(out, p+"NET/IB : No device found.", p+"NET/Socket : Using "+strings.Join(list, " "), p+"Using network Socket")
		out = append(out, p+fmt.Sprintf("Channel %02d/0 : %d[%d] -> %d[%d] [send] via NET/Socket/%d", r.Intn(4), rank, rank%local, (rank+local)%n, rank%local, r.Intn(len(ifs))))
	}
	return out
}

// hsnList is one to four Slingshot interfaces.
func hsnList(r *rand.Rand) []string {
	var out []string
	for i := range 1 + r.Intn(4) {
		out = append(out, fmt.Sprintf("hsn%d", i))
	}
	return out
}

// A job across nodes on NCCL's socket network over Slingshot interfaces
// with no net plugin loaded names the missing OFI plugin first, in every
// release's words for a plugin not found, whether NCCL_SOCKET_IFNAME chose
// the interfaces or NCCL did, behind any prefix, for any node and rank
// count.
func TestNetPluginMissingSlingshot(t *testing.T) {
	r := rand.New(rand.NewSource(332))
	const id = "nccl.net-plugin-missing"
	for _, pre := range causePrefixes(r) {
		for _, release := range []int{18, 19, 22, 26, 30} {
			nodes, local := 2+r.Intn(8), 1+r.Intn(4)
			ifs := hsnList(r)
			env := []string{"", "hsn", strings.Join(ifs, ",")}[r.Intn(3)]
			lines := slingshotSocketJob(r, release, nodes, local, env, ifs, netPluginLines(r, release, ""))
			a := analyseText(prefixed(pre, lines))
			if got := topCause(a); got != id {
				t.Errorf("2.%d, %d nodes × %d, %v, env %q behind %q: first %q (%s)", release, nodes, local, ifs, env, pre, got, flagIDs(a))
				continue
			}
			f := flagOf(a, id)
			if !strings.Contains(f.Message, ifs[0]) || !strings.Contains(f.Evidence, "NET/Plugin") {
				t.Errorf("2.%d: %+v", release, f)
			}
			if !hasFlag(a, "nccl.net-socket") {
				t.Errorf("2.%d: the socket fallback is no longer shown (%s)", release, flagIDs(a))
			}
		}
	}
}

// Not raised: a plugin that loaded (its NET/OFI lines then say which
// provider), interfaces that are not Slingshot's, NCCL_NET=Socket chosen,
// Slingshot interfaces NCCL_SOCKET_IFNAME excludes, one node (no data
// between nodes).
func TestNetPluginMissingNot(t *testing.T) {
	r := rand.New(rand.NewSource(3320))
	const id = "nccl.net-plugin-missing"
	for _, pre := range causePrefixes(r) {
		release := []int{18, 19, 22, 26, 30}[r.Intn(5)]
		none := netPluginLines(r, release, "")
		ifs := hsnList(r)
		cases := map[string][]string{
			"plugin loaded": slingshotSocketJob(r, release, 2, 4, "hsn", ifs, []string{"NET/Plugin: Loaded net plugin AWS Libfabric (v6)", "NET/OFI Selected provider is tcp, fabric is 10.100.0.0/16 (found 2 nics)"}),
			"OFI lines":     slingshotSocketJob(r, release, 2, 4, "", ifs, []string{"NET/OFI Initializing aws-ofi-nccl 1.6.0"}),
			"Ethernet":      slingshotSocketJob(r, release, 2, 4, "", []string{"eth0", "ens5"}, none),
			"excluded":      slingshotSocketJob(r, release, 2, 4, "^hsn", []string{"eth0"}, none),
			"one node":      slingshotSocketJob(r, release, 1, 4, "hsn", ifs, none)[:6],
			"NCCL_NET":      append([]string{ncclPrefix("nid005471", 0, 0) + " NCCL INFO NCCL_NET set by environment to Socket"}, slingshotSocketJob(r, release, 2, 2, "hsn", ifs, none)...),
		}
		for name, lines := range cases {
			if a := analyseText(prefixed(pre, lines)); hasFlag(a, id) {
				t.Errorf("%s, 2.%d behind %q: %s raised (%s)", name, release, pre, id, flagIDs(a))
			}
		}
	}
}

// No fixture raises it: the Slingshot pastes of the field corpus loaded
// the plugin or show a table alone.
func TestNetPluginMissingNothingOnFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, []string{"nccl.net-plugin-missing"}, nil)
}
