package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// Merge gathers sparkrig documents into one report: hosts by name
// (the latest audit of each), analyses and model plans side by side, and
// each part a report holds once (the doctor's cluster, an all-pairs run, a
// triage, a fix plan, a bench plan, a bench run, a comparison, GPU results)
// from the latest document that holds it; the report names each part it
// replaced. A document's cluster findings belong to its part: a qualify
// run's stay with its run, a triage's with its triage, so a part replaced
// takes its findings with it.
type Merge struct {
	r     *Report
	parts map[string]*mergedPart
	notes []Finding
	// nodes are the nodes each document names, in input order, to say
	// when a document shares none with the others (another cluster's).
	nodes []docNodes
	// Open opens an input file (nil: os.Open); the commands hand in one
	// that refuses devices, and FIFOs where nobody waits at a terminal.
	Open func(path string) (io.ReadCloser, error)
	// jsonBytes and jsonObjects count the JSON documents read, against
	// MaxInputBytes and MaxInputObjects.
	jsonBytes, jsonObjects int
}

// mergedPart is one part of the report and the document it came from.
type mergedPart struct {
	input string
	at    time.Time
	// status is the document's verdict: the report's is never better while
	// the part is kept (fix --plan's verdict is the doctor's on evidence the
	// plan does not carry). The doctor's cluster has none: it is judged
	// again with the hosts.
	status  Verdict
	cluster *Cluster
	doc     *Report
}

// mergeParts are the parts a report holds once, in the order their
// findings follow the doctor's: the key, its name in words, and whether a
// document holds it.
var mergeParts = []struct {
	key, name string
	in        func(*Report) bool
}{
	{"all_pairs", "an all-pairs run", func(d *Report) bool { return d.AllPairs != nil }},
	{"triage", "a triage", func(d *Report) bool { return d.Triage != nil }},
	{"bench_run", "a bench run", func(d *Report) bool { return d.BenchRun != nil || d.LinkEvidence != nil }},
	{"fix_plan", "a fix plan", func(d *Report) bool { return d.FixPlan != nil }},
	{"bench_plan", "a bench plan", func(d *Report) bool { return d.BenchPlan != nil }},
	{"comparison", "a bench comparison", func(d *Report) bool { return d.Comparison != nil }},
	{"gpu", "GPU results", func(d *Report) bool { return d.GPU != nil }},
}

// doctorPart is the key of the doctor's cluster (links, topology, cluster
// findings).
const doctorPart = "cluster"

// NewMerge starts from r, whose cluster (an audit's) is the doctor's
// part until a later document replaces it.
func NewMerge(r *Report) *Merge {
	m := &Merge{r: r, parts: map[string]*mergedPart{}}
	if r.Cluster != nil {
		m.parts[doctorPart] = &mergedPart{input: "the audit", at: r.GeneratedAt, cluster: r.Cluster}
	}
	return m
}

// Add merges doc, read from input. A host seen twice keeps its latest
// audit (the later input); a part held twice keeps the document generated
// last (the later input when both say the same time).
func (m *Merge) Add(doc *Report, input string) {
	if ns := NodesOf(doc); len(ns) > 0 {
		m.nodes = append(m.nodes, docNodes{input, ns})
	}
	r := m.r
	// by name, so a document of many hosts merges in linear time
	at := make(map[string][]int, len(r.Hosts))
	for i, h := range r.Hosts {
		at[h.Host] = append(at[h.Host], i)
	}
	for _, h := range doc.Hosts {
		if is, ok := at[h.Host]; ok {
			for _, i := range is {
				r.Hosts[i] = h
			}
			continue
		}
		at[h.Host] = []int{len(r.Hosts)}
		r.Hosts = append(r.Hosts, h)
	}
	r.Analyses = append(r.Analyses, doc.Analyses...)
	r.Plans = append(r.Plans, doc.Plans...)
	owner := ""
	for _, p := range mergeParts {
		if !p.in(doc) {
			continue
		}
		part := &mergedPart{input: input, at: doc.GeneratedAt, status: doc.Status, doc: doc}
		if owner == "" {
			owner, part.cluster = p.key, doc.Cluster
		}
		m.put(p.key, p.name, part)
	}
	if owner == "" && doc.Cluster != nil {
		m.put(doctorPart, "the doctor's cluster audit", &mergedPart{input: input, at: doc.GeneratedAt, cluster: doc.Cluster})
	}
}

func (m *Merge) put(key, name string, p *mergedPart) {
	old := m.parts[key]
	if old == nil {
		m.parts[key] = p
		return
	}
	kept, dropped := p, old
	if p.at.Before(old.at) {
		kept, dropped = old, p
	}
	m.parts[key] = kept
	if old.input == p.input {
		return // the same file given twice
	}
	m.notes = append(m.notes, Finding{ID: "report.part-replaced", Severity: Info, Subject: "report",
		Title:    "each part of a report comes from one document",
		Observed: fmt.Sprintf("%s and %s both hold %s: %s's (generated %s) is shown, %s's (generated %s) left out", dropped.input, kept.input, name, kept.input, generatedAt(kept.at), dropped.input, generatedAt(dropped.at)),
		Expected: "one document of each kind",
		Why:      fmt.Sprintf("a report holds %s once, so it shows the latest and judges it alone", name),
		Source:   "sparkrig report"})
}

func generatedAt(t time.Time) string {
	if t.IsZero() {
		return "at an unknown time"
	}
	return t.UTC().Format(time.RFC3339)
}

// Finish puts the parts into the report: the doctor's cluster with the
// findings of every other part after its own, then the notes on parts
// replaced. It returns the worst verdict the kept parts' documents gave.
func (m *Merge) Finish() Verdict {
	r := m.r
	floor := VerdictNone
	var c *Cluster
	if d := m.parts[doctorPart]; d != nil {
		cc := *d.cluster
		cc.Findings = append([]Finding(nil), cc.Findings...)
		c = &cc
	}
	for _, p := range mergeParts {
		part := m.parts[p.key]
		if part == nil {
			continue
		}
		floor = Worse(floor, part.status)
		switch p.key {
		case "all_pairs":
			r.AllPairs = part.doc.AllPairs
		case "triage":
			r.Triage = part.doc.Triage
		case "bench_run":
			r.BenchRun, r.LinkEvidence = part.doc.BenchRun, part.doc.LinkEvidence
		case "fix_plan":
			r.FixPlan = part.doc.FixPlan
		case "bench_plan":
			r.BenchPlan = part.doc.BenchPlan
		case "comparison":
			r.Comparison = part.doc.Comparison
		case "gpu":
			r.GPU = part.doc.GPU
		}
		if part.cluster == nil {
			continue
		}
		if c == nil {
			// no doctor audit: the run's own view of the cluster (a bench
			// run's topology and qualified directions)
			c = &Cluster{Links: []Link{}}
		}
		if c.Topology == "" {
			c.Topology = part.cluster.Topology
		}
		c.Qualified = append(c.Qualified, part.cluster.Qualified...)
		c.Findings = append(c.Findings, part.cluster.Findings...)
	}
	m.notes = append(m.notes, m.otherClusters()...)
	if len(m.notes) > 0 && c == nil {
		c = &Cluster{Links: []Link{}}
	}
	if c != nil {
		c.Findings = append(c.Findings, m.notes...)
		if c.Findings == nil {
			c.Findings = []Finding{}
		}
	}
	r.Cluster = c
	return floor
}

// PartNames names, in words, the parts r holds once (an all-pairs run, a
// fix plan, …), in the order the merge keeps them.
func PartNames(r *Report) []string {
	var out []string
	for _, p := range mergeParts {
		if p.in(r) {
			out = append(out, p.name)
		}
	}
	return out
}

// docNodes are the nodes one input names.
type docNodes struct {
	input string
	nodes []string
}

// NodesOf lists the nodes a document names, sorted: its hosts, its links'
// ends and qualified directions, an all-pairs run's nodes, a triage's.
func NodesOf(doc *Report) []string {
	set := map[string]bool{}
	for _, h := range doc.Hosts {
		set[h.Host] = true
	}
	if c := doc.Cluster; c != nil {
		for _, l := range c.Links {
			set[l.A.Host], set[l.B.Host] = true, true
		}
		for _, q := range c.Qualified {
			set[hostOf(q.From)], set[hostOf(q.To)] = true, true
		}
	}
	if ap := doc.AllPairs; ap != nil {
		for _, n := range ap.Nodes {
			set[n] = true
		}
	}
	if t := doc.Triage; t != nil {
		for _, n := range t.Nodes {
			set[n.Host] = true
		}
	}
	delete(set, "")
	return slices.Sorted(maps.Keys(set))
}

// hostOf is the host of a "host:netdev" end.
func hostOf(end string) string {
	h, _, _ := strings.Cut(end, ":")
	return h
}

// otherClusters notes each input whose nodes include none that another
// input names: its parts judge other nodes than the rest of the report.
func (m *Merge) otherClusters() []Finding {
	var out []Finding
	for i, d := range m.nodes {
		others := map[string]bool{}
		for j, o := range m.nodes {
			if j != i && o.input != d.input {
				for _, n := range o.nodes {
					others[n] = true
				}
			}
		}
		if len(others) == 0 || slices.ContainsFunc(d.nodes, func(n string) bool { return others[n] }) {
			continue
		}
		out = append(out, Finding{ID: "report.other-cluster", Severity: Info, Subject: d.input,
			Title:    "every document of a report is about the same nodes",
			Observed: fmt.Sprintf("%s names %s, none of which the other inputs name (%s)", d.input, listUpTo(d.nodes, 4), listUpTo(slices.Sorted(maps.Keys(others)), 4)),
			Expected: "documents of one cluster: the nodes of each named by another",
			Why:      "its results judge other nodes than the rest of the report: read it as another cluster's, or report it on its own",
			Source:   "sparkrig report"})
	}
	return out
}

// listUpTo joins up to n names, with how many more there are.
func listUpTo(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}
