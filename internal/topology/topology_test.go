package topology

import "testing"

func TestParseAcceptsEverySpelling(t *testing.T) {
	for in, want := range map[string]Kind{
		"two-nodes-one-cable": OneCable, "one-cable": OneCable, "2-nodes-1-cable": OneCable,
		"two-nodes-two-cables": TwoCables, "two-cables": TwoCables, "2-nodes-2-cables": TwoCables,
		"three-node-ring": Ring, "ring": AnyRing, "3-node-ring": Ring, "Switch": Switch, "single-node": SingleNode,
		"four-node-ring": RingOf(4), "6-node-ring": RingOf(6), "16-node-ring": "16-node-ring", "mixed": Mixed,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := Parse("mesh"); err == nil || err.Error() != `unknown topology "mesh" (want one of single-node, two-nodes-one-cable, two-nodes-two-cables, three-node-ring, four-node-ring, six-node-ring, switch, mixed, no-data-links, other, or N-node-ring)` {
		t.Errorf("Parse(mesh): %v", err)
	}
}

func TestRingSizes(t *testing.T) {
	for n, want := range map[int]Kind{3: Ring, 4: "four-node-ring", 6: "six-node-ring", 13: "13-node-ring"} {
		if got := RingOf(n); got != want || got.Nodes() != n || !got.IsRing() {
			t.Errorf("RingOf(%d) = %q (nodes %d, ring %v)", n, got, got.Nodes(), got.IsRing())
		}
	}
	if Switch.IsRing() || TwoCables.IsRing() || !AnyRing.IsRing() || AnyRing.Nodes() != 0 {
		t.Error("IsRing/Nodes wrong for switch, two cables or ring")
	}
}
