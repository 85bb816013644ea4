package analyze

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// refusedLine is one rank's final connection failure to addr in NCCL
// release 2.<release>'s words (see refusedFinal).
func refusedLine(host string, rank, release int, addr string) string {
	p := ncclPrefix(host, rank, rank%8)
	port := 40000 + rank
	switch {
	case release <= 11:
		return fmt.Sprintf("%s include/socket.h:403 NCCL WARN Connect to %s<%d> failed : Connection refused", p, addr, port)
	case release <= 15:
		return fmt.Sprintf("%s misc/socket.cc:456 NCCL WARN Net : Connect to %s<%d> failed : Connection refused", p, addr, port)
	case release <= 23: // no address: socket.cc v2.16.2-1 to v2.23.4-1
		return fmt.Sprintf("%s misc/socket.cc:467 NCCL WARN socketStartConnect: exceeded retries (20000)", p)
	case release < 27: // no address: socket.cc v2.24.3-1 to v2.26.2-1
		return fmt.Sprintf("%s misc/socket.cc:543 NCCL WARN socketPollConnect: connect returned Connection refused, exceeded error retry count (35)", p)
	}
	return fmt.Sprintf("%s misc/socket.cc:578 NCCL WARN ncclSocketConnect: connect to %s<%d> returned Connection refused, exceeded error retry count after 35 attempts", p, addr, port)
}

// One node among N refusing every connection NCCL makes to it, reported by
// two or more ranks (or one rank twice), is named with its address behind
// any prefix, in every release's words, for any job size.
func TestPeerRefusesOneNode(t *testing.T) {
	r := rand.New(rand.NewSource(264))
	const id = "nccl.peer-refuses"
	for _, pre := range causePrefixes(r) {
		for _, release := range []int{7, 13, 27, 30} {
			nodes := 2 + r.Intn(30)
			bad := r.Intn(nodes)
			addr := fmt.Sprintf("10.148.%d.%d", bad/200, 10+bad%200)
			reporters := 2 + r.Intn(6)
			var lines []string
			for i := 0; i < reporters; i++ {
				h := (bad + 1 + i) % nodes
				if h == bad {
					h = (h + 1) % nodes
				}
				lines = append(lines, refusedLine(fmt.Sprintf("r%di6n%d", h/8, h%8), h*8+r.Intn(8), release, addr))
			}
			a := analyseText(prefixed(pre, lines))
			if got := topCause(a); got != id {
				t.Errorf("2.%d, %d nodes, %d reporters behind %q: first %q (%s)\n%q", release, nodes, reporters, pre, got, flagIDs(a), lines)
				continue
			}
			if f := flagOf(a, id); !strings.Contains(f.Message, addr+" ") || !strings.Contains(f.Fix, addr) {
				t.Errorf("%s does not name %s: %s / %s", id, addr, f.Message, f.Fix)
			}
			// The same rank refused twice counts too.
			one := refusedLine("r1i0n0", 3, release, addr)
			if got := topCause(analyseText(prefixed(pre, []string{one, one}))); got != id {
				t.Errorf("2.%d, one rank twice behind %q: first %q", release, pre, got)
			}
		}
	}
}

// NCCL 2.16 to 2.26 end a refused connection without naming the address:
// however many ranks report it, no node is named.
func TestPeerRefusesNoAddressReleases(t *testing.T) {
	for _, release := range []int{16, 19, 23, 24, 26} {
		var lines []string
		for rank := range 6 {
			lines = append(lines, refusedLine(fmt.Sprintf("n%d", rank), rank, release, "10.0.0.2"))
		}
		if a := analyseText(prefixed("", lines)); hasFlag(a, "nccl.peer-refuses") {
			t.Errorf("2.%d: nccl.peer-refuses raised from lines without an address (%s)", release, flagIDs(a))
		}
	}
}

// Refusals spread over as many addresses as lines, NCCL's "retrying" INFO
// lines and a loopback peer do not name a node.
func TestPeerRefusesNotOneNode(t *testing.T) {
	r := rand.New(rand.NewSource(2640))
	const id = "nccl.peer-refuses"
	for _, pre := range causePrefixes(r) {
		release := []int{7, 13, 27}[r.Intn(3)]
		cases := map[string][]string{
			"spread": {refusedLine("n1", 1, release, "10.0.0.2"), refusedLine("n2", 9, release, "10.0.0.3"), refusedLine("n3", 17, release, "10.0.0.4")},
			"retrying": {
				ncclPrefix("n1", 1, 1) + " NCCL INFO ncclSocketConnect: connect to 10.0.0.2<40123> returned Connection refused, retrying (1/34) after sleep for 100 msec",
				ncclPrefix("n2", 9, 1) + " NCCL INFO ncclSocketConnect: connect to 10.0.0.2<40123> returned Connection refused, retrying (2/34) after sleep for 200 msec",
			},
			"loopback": {refusedLine("n1", 1, release, "127.0.0.1"), refusedLine("n1", 2, release, "127.0.0.1")},
		}
		for name, lines := range cases {
			if a := analyseText(prefixed(pre, lines)); hasFlag(a, id) {
				t.Errorf("%s behind %q: %s raised (%s)", name, pre, id, flagIDs(a))
			}
		}
	}
}

// The line of the Slurm "Broken Network" recipe (field cases 264 and 363):
// one rank's last attempt to 10.148.3.247, refused through NCCL 2.7.8's
// retries, names that node first.
func TestPeerRefusesBrokenNodeLine(t *testing.T) {
	const line = "r11i6n2:486514:486651 [1] include/socket.h:403 NCCL WARN Connect to 10.148.3.247<56821> failed : Connection refused"
	a := analyseText(line + "\n")
	if got := topCause(a); got != "nccl.peer-refuses" {
		t.Fatalf("first %q (%s)", got, flagIDs(a))
	}
	f := flagOf(a, "nccl.peer-refuses")
	if !strings.Contains(f.Message, "the node at 10.148.3.247 refused") || !strings.Contains(f.Fix, "nslookup 10.148.3.247") || !strings.Contains(f.Evidence, line[len("r11i6n2:486514:486651 [1] include/socket.h:403 NCCL WARN "):]) {
		t.Errorf("flag does not name the node: %+v", f)
	}
	if !hasFlag(a, "error.socket-connect-failed") {
		t.Errorf("the signature is no longer shown below it (%s)", flagIDs(a))
	}
}

// One final refusal by an address that can name a node, in every release
// that prints the address, behind any prefix, from any rank of any job
// size, with the job's own healthy startup lines around it, names that
// node first.
func TestPeerRefusesSingleFinal(t *testing.T) {
	r := rand.New(rand.NewSource(363))
	const id = "nccl.peer-refuses"
	for _, pre := range causePrefixes(r) {
		for _, release := range []int{7, 11, 13, 15, 27, 30} {
			nodes := 2 + r.Intn(60)
			me, bad := r.Intn(nodes), r.Intn(nodes)
			if bad == me {
				bad = (me + 1) % nodes
			}
			rank := me*8 + r.Intn(8)
			addr := fmt.Sprintf("10.20.%d.%d", bad, 10+bad) // startup()'s address of node bad
			host := fmt.Sprintf("node%03d", me)
			var lines []string
			if r.Intn(2) == 0 {
				lines = append(lines, startup(host, rank, rank%8, me, "2."+fmt.Sprint(release)+".3")...)
			}
			lines = append(lines, refusedLine(host, rank, release, addr))
			a := analyseText(prefixed(pre, lines))
			if got := topCause(a); got != id {
				t.Errorf("2.%d, %d nodes behind %q: first %q (%s)\n%q", release, nodes, pre, got, flagIDs(a), lines)
				continue
			}
			if f := flagOf(a, id); !strings.Contains(f.Message, addr+" ") || !strings.Contains(f.Fix, addr) {
				t.Errorf("%s does not name %s: %s / %s", id, addr, f.Message, f.Fix)
			}
		}
	}
}

// A single refusal keeps the cause it had where the address is the
// printing process's own (its bootstrap, socket or out-of-band interface,
// or a host name that spells it), a loopback, link-local or default bridge
// address, or where the startup lines show another cause (an interface no
// other node reaches).
func TestPeerRefusesSingleNotANode(t *testing.T) {
	r := rand.New(rand.NewSource(3630))
	const id = "nccl.peer-refuses"
	for _, pre := range causePrefixes(r) {
		release := []int{7, 13, 27, 30}[r.Intn(4)]
		hostIdx := r.Intn(200)
		own := fmt.Sprintf("10.20.%d.%d", hostIdx, 10+hostIdx) // startup()'s address
		rank := r.Intn(64)
		bridge := fmt.Sprintf("172.17.0.%d", 2+r.Intn(200))
		cases := map[string][]string{
			"own bootstrap address": append(startup("gpu7", rank, rank%8, hostIdx, "2.7.8"), refusedLine("gpu7", rank, release, own)),
			"host name spells it":   {refusedLine("ip-10-1-2-"+fmt.Sprint(3+hostIdx), rank, release, "10.1.2."+fmt.Sprint(3+hostIdx))},
			"docker bridge":         {refusedLine("gpu7", rank, release, bridge)},
			"libvirt bridge":        {refusedLine("gpu7", rank, release, "192.168.122."+fmt.Sprint(2+hostIdx))},
			"link-local":            {refusedLine("gpu7", rank, release, fmt.Sprintf("169.254.%d.%d", 1+hostIdx, 7))},
			"loopback":              {refusedLine("gpu7", rank, release, "127.0.1.1")},
			"veth in the socket list": {
				ncclPrefix("gpu7", rank, 0) + " NCCL INFO NET/Socket : Using [0]eth0:10.0.0.5<0> [1]veth3f2a:169.254.3.1<0>",
				ncclPrefix("gpu7", rank, 0) + " NCCL INFO Using network Socket",
				ncclPrefix("gpu7", rank, 0) + " NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/Socket/1",
				refusedLine("gpu7", rank, release, "10.0.0.9"),
			},
		}
		for name, lines := range cases {
			if a := analyseText(prefixed(pre, lines)); hasFlag(a, id) {
				t.Errorf("%s, 2.%d behind %q: %s raised (%s)\n%q", name, release, pre, id, flagIDs(a), lines)
			}
		}
	}
}

// No fixture but the two field cases of the Slurm recipe raises it: the
// other pastes with refused connections show refusals to a container
// bridge or loopback address, or an interface that explains them.
func TestPeerRefusesNothingOnFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, []string{"nccl.peer-refuses"}, map[string]bool{
		"field/train/264_slurm_peer_node_network_broken_nccl_connect_refused.txt": true,
		"field/train/363_slurm_broken_node_nccl_warn_connect_refused.txt":         true,
	})
}
