package facts

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Firewall is the node's packet filter as the kernel applies it: the filter
// table of iptables (`iptables -S`, legacy or nf_tables backend) and every
// nftables table (`nft -j list ruleset`). A forwarded packet passes only if
// every base chain hooked at forward, in either, lets it through.
type Firewall struct {
	// Iptables is the filter table's chains; nil when iptables -S was not
	// read.
	Iptables []FilterChain `json:"iptables,omitempty"`
	// NFT is every nftables chain; NFTRead says the ruleset was read (an
	// empty ruleset has no chains).
	NFT     []FilterChain `json:"nftables,omitempty"`
	NFTRead bool          `json:"nftables_read,omitempty"`
	// NFTError says why an installed nft could not list the ruleset.
	NFTError string `json:"nftables_error,omitempty"`
}

// FilterChain is one chain of a packet filter.
type FilterChain struct {
	// Table is "iptables filter" for iptables' filter table, else the
	// nftables family and table ("ip filter", "inet fw").
	Table string `json:"table"`
	Name  string `json:"name"`
	// Hook, Priority and Policy are set on a base chain ("forward", 0,
	// "drop"); a regular chain is entered only by a jump or goto.
	Hook     string       `json:"hook,omitempty"`
	Priority int          `json:"priority,omitempty"`
	Policy   string       `json:"policy,omitempty"`
	Rules    []FilterRule `json:"rules,omitempty"`
}

// FilterRule is one rule: what it matches and its verdict. Matches sparkrig
// does not read (a protocol, a port, a mark, a rate) make it Partial: it
// sees part of the traffic only.
type FilterRule struct {
	// Text is the rule as listed: the -A line, or "handle N" in nftables.
	Text string `json:"text"`
	// In and Out are interface names the rule asks for (any of them; a
	// trailing "+" or "*" is a prefix); empty matches any. Not inverts.
	In     []string `json:"in,omitempty"`
	NotIn  bool     `json:"not_in,omitempty"`
	Out    []string `json:"out,omitempty"`
	NotOut bool     `json:"not_out,omitempty"`
	// Src and Dst are address prefixes; empty matches any.
	Src    []string `json:"src,omitempty"`
	NotSrc bool     `json:"not_src,omitempty"`
	Dst    []string `json:"dst,omitempty"`
	NotDst bool     `json:"not_dst,omitempty"`
	// CTState are connection-tracking states (lower case); empty matches
	// any.
	CTState    []string `json:"ct_state,omitempty"`
	NotCTState bool     `json:"not_ct_state,omitempty"`
	Partial    bool     `json:"partial,omitempty"`
	// Verdict is "accept", "drop", "reject", "return", "jump" or "goto"
	// (to Target), or "" for a rule that only counts or logs.
	Verdict string `json:"verdict,omitempty"`
	Target  string `json:"target,omitempty"`
}

// IptablesTable names iptables' filter table in FilterChain.Table.
const IptablesTable = "iptables filter"

// ParseIptablesS reads `iptables -S` (the filter table): policies, chains
// and rules in order.
func ParseIptablesS(b []byte) []FilterChain {
	var chains []FilterChain
	idx := map[string]int{}
	chain := func(name string) *FilterChain {
		i, ok := idx[name]
		if !ok {
			i = len(chains)
			idx[name] = i
			chains = append(chains, FilterChain{Table: IptablesTable, Name: name})
			switch name { // the filter table's built-in chains
			case "INPUT", "FORWARD", "OUTPUT":
				chains[i].Hook = strings.ToLower(name)
			}
		}
		return &chains[i]
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4<<10), 1<<20) // grown as long lines need
	for sc.Scan() {
		f := shellFields(sc.Text())
		switch {
		case len(f) >= 3 && f[0] == "-P":
			chain(f[1]).Policy = strings.ToLower(f[2])
		case len(f) >= 2 && f[0] == "-N":
			chain(f[1])
		case len(f) >= 2 && f[0] == "-A":
			c := chain(f[1])
			c.Rules = append(c.Rules, iptablesRule(sc.Text(), f[2:]))
		}
	}
	return chains
}

// iptablesRule reads the matches and target of one -A line; what follows
// the target is its options (REJECT's --reject-with, LOG's --log-prefix).
func iptablesRule(text string, f []string) FilterRule {
	r := FilterRule{Text: text}
	not := false
	for i := 0; i < len(f); i++ {
		if f[i] == "-j" || f[i] == "--jump" || f[i] == "-g" || f[i] == "--goto" {
			if i+1 < len(f) {
				iptablesTarget(&r, f[i+1], f[i] == "-g" || f[i] == "--goto")
			}
			return r
		}
		arg := func() string {
			if i+1 < len(f) {
				i++
				return f[i]
			}
			r.Partial = true
			return ""
		}
		switch f[i] {
		case "!":
			not = true
			continue
		case "-i", "--in-interface":
			r.In, r.NotIn = []string{arg()}, not
		case "-o", "--out-interface":
			r.Out, r.NotOut = []string{arg()}, not
		case "-s", "--source":
			r.Src, r.NotSrc = strings.Split(arg(), ","), not
		case "-d", "--destination":
			r.Dst, r.NotDst = strings.Split(arg(), ","), not
		case "-p", "--protocol":
			if p := arg(); p != "all" || not {
				r.Partial = true
			}
		case "-m", "--match":
			switch arg() {
			case "conntrack", "state", "comment":
			default:
				r.Partial = true
			}
		case "--ctstate", "--state":
			r.CTState, r.NotCTState = strings.Split(strings.ToLower(arg()), ","), not
		case "--comment":
			arg()
		default:
			r.Partial = true // a match sparkrig does not read
		}
		not = false
	}
	return r
}

// iptablesTarget sets the verdict of a rule's target (-j, or -g when
// goto).
func iptablesTarget(r *FilterRule, t string, goto_ bool) {
	switch t {
	case "ACCEPT", "DROP", "REJECT", "RETURN":
		r.Verdict = strings.ToLower(t)
	case "LOG", "NFLOG", "MARK", "CONNMARK", "TRACE", "CT", "NOTRACK":
		// counts, logs or marks: no verdict
	default:
		r.Verdict, r.Target = "jump", t
		if goto_ {
			r.Verdict = "goto"
		}
	}
}

// shellFields splits an iptables -S line into words, honouring the double
// quotes around comments.
func shellFields(s string) []string {
	var out []string
	var b strings.Builder
	in, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && quoted && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case c == '"':
			quoted, in = !quoted, true
		case (c == ' ' || c == '\t') && !quoted:
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
}

// ParseNFTJSON reads `nft -j list ruleset`: every chain with its hook,
// priority and policy, and its rules in order.
func ParseNFTJSON(b []byte) ([]FilterChain, error) {
	var doc struct {
		Nftables []struct {
			Chain *struct {
				Family, Table, Name, Hook, Policy string
				Prio                              json.RawMessage
			}
			Rule *struct {
				Family, Table, Chain string
				Handle               int
				Expr                 []map[string]json.RawMessage
			}
		}
	}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] != '{' {
		return nil, fmt.Errorf("nft's ruleset is listed as text, not JSON")
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("nft -j list ruleset: %w", err)
	}
	chains := []FilterChain{}
	idx := map[string]int{}
	key := func(family, table, name string) string { return family + " " + table + "\x00" + name }
	for _, o := range doc.Nftables {
		if c := o.Chain; c != nil {
			fc := FilterChain{Table: c.Family + " " + c.Table, Name: c.Name, Hook: c.Hook, Policy: c.Policy}
			if c.Hook != "" && fc.Policy == "" {
				fc.Policy = "accept" // nftables' default policy
			}
			fc.Priority = nftPriority(c.Prio)
			idx[key(c.Family, c.Table, c.Name)] = len(chains)
			chains = append(chains, fc)
		}
	}
	for _, o := range doc.Nftables {
		if r := o.Rule; r != nil {
			i, ok := idx[key(r.Family, r.Table, r.Chain)]
			if !ok {
				continue
			}
			chains[i].Rules = append(chains[i].Rules, nftRule(r.Handle, r.Expr))
		}
	}
	return chains, nil
}

// nftPriority reads a chain's priority: a number, or (in older nft) a
// named priority such as "filter".
func nftPriority(raw json.RawMessage) int {
	var n int
	if json.Unmarshal(raw, &n) == nil {
		return n
	}
	var s string
	json.Unmarshal(raw, &s)
	// Documented in nft(8), CHAINS: standard priority names.
	return map[string]int{"raw": -300, "mangle": -150, "dstnat": -100, "filter": 0, "security": 50, "srcnat": 100}[s]
}

// nftRule reads one rule's expressions.
func nftRule(handle int, exprs []map[string]json.RawMessage) FilterRule {
	r := FilterRule{Text: "handle " + strconv.Itoa(handle)}
	for _, e := range exprs {
		for k, v := range e {
			switch k {
			case "match":
				nftMatch(&r, v)
			case "accept", "drop", "return":
				r.Verdict = k
			case "reject":
				r.Verdict = "drop"
			case "jump", "goto":
				var t struct{ Target string }
				json.Unmarshal(v, &t)
				r.Verdict, r.Target = k, t.Target
			case "counter", "log", "comment", "mangle", "notrack":
				// no verdict, no match
			case "xt": // an iptables match or target nft cannot show
				var x struct{ Type, Name string }
				json.Unmarshal(v, &x)
				switch {
				case x.Type == "match" && x.Name == "comment":
				case x.Type == "target" && x.Name == "REJECT":
					r.Verdict = "drop"
				default:
					r.Partial = true
				}
			default: // limit, quota, queue, vmap, ...
				r.Partial = true
			}
		}
	}
	return r
}

// nftMatch reads one match expression: interface names, addresses and
// connection-tracking state; anything else makes the rule Partial.
func nftMatch(r *FilterRule, raw json.RawMessage) {
	var m struct {
		Op    string
		Left  map[string]json.RawMessage
		Right json.RawMessage
	}
	if json.Unmarshal(raw, &m) != nil {
		r.Partial = true
		return
	}
	not := m.Op == "!="
	if m.Op != "==" && m.Op != "!=" && m.Op != "in" {
		r.Partial = true
		return
	}
	var meta, ct struct{ Key string }
	var payload struct{ Protocol, Field string }
	switch {
	case json.Unmarshal(m.Left["meta"], &meta) == nil && (meta.Key == "iifname" || meta.Key == "iif"):
		r.In, r.NotIn = nftValues(m.Right, r), not
	case json.Unmarshal(m.Left["meta"], &meta) == nil && (meta.Key == "oifname" || meta.Key == "oif"):
		r.Out, r.NotOut = nftValues(m.Right, r), not
	case json.Unmarshal(m.Left["payload"], &payload) == nil && payload.Protocol == "ip" && payload.Field == "saddr":
		r.Src, r.NotSrc = nftValues(m.Right, r), not
	case json.Unmarshal(m.Left["payload"], &payload) == nil && payload.Protocol == "ip" && payload.Field == "daddr":
		r.Dst, r.NotDst = nftValues(m.Right, r), not
	case json.Unmarshal(m.Left["ct"], &ct) == nil && ct.Key == "state":
		r.CTState, r.NotCTState = nftValues(m.Right, r), not
	default:
		r.Partial = true
	}
}

// nftValues reads a match's right side: a name, a list (ct states), an
// anonymous set, or a prefix. A named set (@name) or anything else makes
// the rule Partial.
func nftValues(raw json.RawMessage, r *FilterRule) []string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if strings.HasPrefix(s, "@") {
			r.Partial = true
			return nil
		}
		return []string{s}
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		var set struct{ Set []json.RawMessage }
		if json.Unmarshal(raw, &set) == nil && set.Set != nil {
			list = set.Set
		} else {
			list = []json.RawMessage{raw}
		}
	}
	var out []string
	for _, e := range list {
		var p struct {
			Prefix *struct {
				Addr string
				Len  int
			}
		}
		switch {
		case json.Unmarshal(e, &s) == nil:
			out = append(out, s)
		case json.Unmarshal(e, &p) == nil && p.Prefix != nil:
			out = append(out, p.Prefix.Addr+"/"+strconv.Itoa(p.Prefix.Len))
		default:
			r.Partial = true
		}
	}
	return out
}
