package topology

import "testing"

func TestParseAcceptsEverySpelling(t *testing.T) {
	for in, want := range map[string]Kind{
		"two-nodes-one-cable": OneCable, "one-cable": OneCable, "2-nodes-1-cable": OneCable,
		"two-nodes-two-cables": TwoCables, "two-cables": TwoCables, "2-nodes-2-cables": TwoCables,
		"three-node-ring": Ring, "ring": Ring, "3-node-ring": Ring, "Switch": Switch, "single-node": SingleNode,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := Parse("mesh"); err == nil || err.Error() != `unknown topology "mesh" (want one of single-node, two-nodes-one-cable, two-nodes-two-cables, three-node-ring, switch, no-data-links, other)` {
		t.Errorf("Parse(mesh): %v", err)
	}
}
