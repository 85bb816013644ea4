// Package topology names how a cluster's nodes are cabled. It is the one
// vocabulary every command prints and every --topology flag accepts (the
// older spellings too), and the key expectations are filed under.
package topology

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is a cabling layout.
type Kind string

// The layouts sparkrig recognises (DGX Spark platform notes, "Topologies").
const (
	SingleNode  Kind = "single-node"
	NoDataLinks Kind = "no-data-links"
	OneCable    Kind = "two-nodes-one-cable"  // two nodes, one QSFP cable
	TwoCables   Kind = "two-nodes-two-cables" // two nodes, both QSFP ports cabled
	Ring        Kind = "three-node-ring"      // three nodes, switchless: N1.P0–N2.P1, N2.P0–N3.P1, N3.P0–N1.P1
	Switch      Kind = "switch"               // nodes on a QSFP switch
	Mixed       Kind = "mixed"                // a switch and direct cables together
	Other       Kind = "other"
	// AnyRing is what --topology ring means: a switchless ring of as many
	// nodes as are given (RingOf that count).
	AnyRing Kind = "ring"
)

// ringWords spell the ring sizes people write out.
var ringWords = []string{3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten", 11: "eleven", 12: "twelve"}

// RingOf is the switchless ring of n ≥ 3 nodes, each node's port 0 cabled
// to the next node's port 1: "four-node-ring", "six-node-ring", ...
// ("16-node-ring" past twelve).
func RingOf(n int) Kind {
	if n >= 3 && n < len(ringWords) {
		return Kind(ringWords[n] + "-node-ring")
	}
	return Kind(strconv.Itoa(n) + "-node-ring")
}

// IsRing reports a switchless ring of three or more nodes.
func (k Kind) IsRing() bool { return k == AnyRing || k.ringSize() >= 3 }

func (k Kind) ringSize() int {
	w, ok := strings.CutSuffix(string(k), "-node-ring")
	if !ok {
		return 0
	}
	for n, word := range ringWords {
		if word != "" && word == w {
			return n
		}
	}
	n, _ := strconv.Atoi(w)
	return n
}

// Known lists every layout by its canonical name; rings of any size are
// RingOf(n), "four-node-ring" and so on.
var Known = []Kind{SingleNode, OneCable, TwoCables, Ring, RingOf(4), RingOf(6), Switch, Mixed, NoDataLinks, Other}

// Configurable are the layouts `sparkrig fix` writes configuration for
// (AnyRing: a ring of the nodes given, three or more).
var Configurable = []Kind{OneCable, TwoCables, AnyRing, Switch}

// aliases are the spellings earlier versions printed or accepted.
var aliases = map[string]Kind{
	"one-cable": OneCable, "2-nodes-1-cable": OneCable,
	"two-cables": TwoCables, "2-nodes-2-cables": TwoCables,
	"ring": AnyRing, "switchless-ring": AnyRing,
	"switched": Switch,
}

// Parse reads a layout name or one of its older spellings, case-insensitively.
func Parse(s string) (Kind, error) {
	n := strings.ToLower(strings.TrimSpace(s))
	for _, k := range Known {
		if string(k) == n {
			return k, nil
		}
	}
	if k, ok := aliases[n]; ok {
		return k, nil
	}
	if k := Kind(n); k.ringSize() >= 3 {
		return RingOf(k.ringSize()), nil // "4-node-ring" as well as "four-node-ring"
	}
	return "", fmt.Errorf("unknown topology %q (want one of %s, or N-node-ring)", s, Names(Known))
}

// Names joins layout names for messages and help.
func Names(ks []Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// Nodes is the node count a layout implies (0 when it does not say: a
// switch, other layouts).
func (k Kind) Nodes() int {
	switch k {
	case SingleNode:
		return 1
	case OneCable, TwoCables:
		return 2
	}
	return k.ringSize()
}
