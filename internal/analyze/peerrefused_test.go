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

// A single refusal (the peer rank may have exited first), refusals spread
// over as many addresses as lines, NCCL's "retrying" INFO lines and a
// loopback peer do not name a node.
func TestPeerRefusesNotOneNode(t *testing.T) {
	r := rand.New(rand.NewSource(2640))
	const id = "nccl.peer-refuses"
	for _, pre := range causePrefixes(r) {
		release := []int{7, 13, 27}[r.Intn(3)]
		cases := map[string][]string{
			"one refusal": {refusedLine("r11i6n2", 1, release, "10.148.3.247")},
			"spread":      {refusedLine("n1", 1, release, "10.0.0.2"), refusedLine("n2", 9, release, "10.0.0.3"), refusedLine("n3", 17, release, "10.0.0.4")},
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

// No fixture raises it: the field pastes with refused connections show one
// refusal or refusals to a container bridge address.
func TestPeerRefusesNothingOnFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, []string{"nccl.peer-refuses"}, nil)
}
