package allpairs

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/sparkrig/sparkrig/internal/bench"
)

// ringRails cables hosts in the ring order given, two twin rails a cable,
// named in the order bench names them (by the first end's place in hosts).
func ringRails(hosts, ring []string) ([]bench.Rail, []bench.Step) {
	var rails []bench.Rail
	var steps []bench.Step
	for _, a := range hosts {
		for i, h := range ring {
			b := ring[(i+1)%len(ring)]
			if h != a && b != a {
				continue
			}
			peer := b
			if h != a {
				peer = h
			}
			if idx(hosts, peer) < idx(hosts, a) {
				continue // named from its other end
			}
			for twin := range 2 {
				name := fmt.Sprintf("rail%d", len(rails))
				rails = append(rails, bench.Rail{Name: name, A: bench.Endpoint{Host: a, NetDev: fmt.Sprint("t", twin)}, B: bench.Endpoint{Host: peer}})
				steps = append(steps, bench.Step{ID: "qualify/" + name + "/" + a + "-to-" + peer, Rails: []string{name}},
					bench.Step{ID: "qualify/" + name + "/" + peer + "-to-" + a, Rails: []string{name}})
			}
		}
	}
	return rails, steps
}

func idx(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func ids(steps []bench.Step) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.ID)
	}
	return out
}

// doctor --qualify's steps on a ring of four cabled a-c-b-d-a (not in
// host order): the cables in NCCL's even phase (a-c, b-d), then its odd
// phase (c-b, d-a), each cable's two twins and two directions together.
func TestRingScheduleFollowsThePhases(t *testing.T) {
	hosts := []string{"a", "b", "c", "d"}
	rails, steps := ringRails(hosts, []string{"a", "c", "b", "d"})
	if order, ok := RingOrder(hosts, rails); !ok || !reflect.DeepEqual(order, []string{"a", "c", "b", "d"}) {
		t.Fatalf("ring order %v %v", order, ok)
	}
	want := []string{
		"qualify/rail0/a-to-c", "qualify/rail0/c-to-a", "qualify/rail1/a-to-c", "qualify/rail1/c-to-a",
		"qualify/rail6/b-to-d", "qualify/rail6/d-to-b", "qualify/rail7/b-to-d", "qualify/rail7/d-to-b",
		"qualify/rail4/b-to-c", "qualify/rail4/c-to-b", "qualify/rail5/b-to-c", "qualify/rail5/c-to-b",
		"qualify/rail2/a-to-d", "qualify/rail2/d-to-a", "qualify/rail3/a-to-d", "qualify/rail3/d-to-a",
	}
	if got := ids(RingSchedule(hosts, rails, steps)); !reflect.DeepEqual(got, want) {
		t.Fatalf("order\n%q\nwant\n%q", got, want)
	}
}

// An odd ring's wrap cable comes last, in a phase of its own.
func TestRingScheduleOfThree(t *testing.T) {
	hosts := []string{"a", "b", "c"}
	rails, steps := ringRails(hosts, hosts)
	got := ids(RingSchedule(hosts, rails, steps))
	want := []string{
		"qualify/rail0/a-to-b", "qualify/rail0/b-to-a", "qualify/rail1/a-to-b", "qualify/rail1/b-to-a",
		"qualify/rail4/b-to-c", "qualify/rail4/c-to-b", "qualify/rail5/b-to-c", "qualify/rail5/c-to-b",
		"qualify/rail2/a-to-c", "qualify/rail2/c-to-a", "qualify/rail3/a-to-c", "qualify/rail3/c-to-a",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("order\n%q\nwant\n%q", got, want)
	}
}

// No ring, no change: a pair, a chain, a node with three cables.
func TestRingScheduleLeavesOtherCablingAlone(t *testing.T) {
	chain := []bench.Rail{{Name: "rail0", A: bench.Endpoint{Host: "a"}, B: bench.Endpoint{Host: "b"}},
		{Name: "rail1", A: bench.Endpoint{Host: "b"}, B: bench.Endpoint{Host: "c"}}}
	star := append(chain, bench.Rail{Name: "rail2", A: bench.Endpoint{Host: "b"}, B: bench.Endpoint{Host: "d"}},
		bench.Rail{Name: "rail3", A: bench.Endpoint{Host: "a"}, B: bench.Endpoint{Host: "c"}})
	steps := []bench.Step{{ID: "z", Rails: []string{"rail1"}}, {ID: "y", Rails: []string{"rail0"}}}
	for _, c := range []struct {
		hosts []string
		rails []bench.Rail
	}{{[]string{"a", "b"}, chain[:1]}, {[]string{"a", "b", "c"}, chain}, {[]string{"a", "b", "c", "d"}, star}} {
		if _, ok := RingOrder(c.hosts, c.rails); ok {
			t.Errorf("%v: a ring", c.hosts)
		}
		if got := ids(RingSchedule(c.hosts, c.rails, steps)); !reflect.DeepEqual(got, []string{"z", "y"}) {
			t.Errorf("%v: %q", c.hosts, got)
		}
	}
}
