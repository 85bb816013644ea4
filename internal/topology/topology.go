// Package topology names how a cluster's nodes are cabled. It is the one
// vocabulary every command prints and every --topology flag accepts (the
// older spellings too), and the key expectations are filed under.
package topology

import (
	"fmt"
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
	Other       Kind = "other"
)

// Known lists every layout by its canonical name.
var Known = []Kind{SingleNode, OneCable, TwoCables, Ring, Switch, NoDataLinks, Other}

// Configurable are the layouts `sparkrig fix` writes configuration for.
var Configurable = []Kind{OneCable, TwoCables, Ring, Switch}

// aliases are the spellings earlier versions printed or accepted.
var aliases = map[string]Kind{
	"one-cable": OneCable, "2-nodes-1-cable": OneCable,
	"two-cables": TwoCables, "2-nodes-2-cables": TwoCables,
	"ring": Ring, "3-node-ring": Ring,
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
	return "", fmt.Errorf("unknown topology %q (want one of %s)", s, Names(Known))
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
	case Ring:
		return 3
	}
	return 0
}
