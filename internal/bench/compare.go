package bench

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
)

// Compare matches two runs' results by step, subject and metric.
func Compare(a, b *Record) report.BenchComparison {
	c := report.BenchComparison{Before: a.Bench.ID, BeforeStatus: a.Status, After: b.Bench.ID, AfterStatus: b.Status, Changes: []report.BenchChange{}, Setup: []string{}}
	idx := map[string]int{}
	key := func(step, subject, metric string) string { return step + "\x00" + subject + "\x00" + metric }
	for _, an := range a.Analyses {
		for _, it := range an.Items {
			v := it.Value
			idx[key(an.File, it.Subject, it.Metric)] = len(c.Changes)
			c.Changes = append(c.Changes, report.BenchChange{Step: an.File, Subject: it.Subject, Metric: it.Metric, Unit: it.Unit, Before: &v, VerdictBefore: it.Verdict})
		}
	}
	for _, an := range b.Analyses {
		for _, it := range an.Items {
			v := it.Value
			i, ok := idx[key(an.File, it.Subject, it.Metric)]
			if !ok {
				c.Changes = append(c.Changes, report.BenchChange{Step: an.File, Subject: it.Subject, Metric: it.Metric, Unit: it.Unit, After: &v, VerdictAfter: it.Verdict})
				continue
			}
			ch := &c.Changes[i]
			ch.After, ch.VerdictAfter = &v, it.Verdict
			if *ch.Before != 0 {
				d := round2((v - *ch.Before) / *ch.Before * 100)
				ch.DeltaPct = &d
			}
		}
	}
	c.Setup = append(c.Setup, diffVars(a.Bench.Plan, b.Bench.Plan)...)
	c.Setup = append(c.Setup, diffNodes(a.Bench.Nodes, b.Bench.Nodes)...)
	c.Setup = append(c.Setup, diffRails(a.Bench.Plan, b.Bench.Plan)...)
	return c
}

func diffVars(a, b *Plan) []string {
	get := func(p *Plan) map[string]string {
		m := map[string]string{}
		if p != nil {
			for _, v := range p.NCCLEnv {
				m[v.Name] = v.Value
			}
		}
		return m
	}
	return diffMaps("env", get(a), get(b))
}

func diffNodes(a, b []NodeSummary) []string {
	get := func(ns []NodeSummary) map[string]string {
		m := map[string]string{}
		for _, n := range ns {
			m[n.Host+" NCCL"] = n.NCCL
			m[n.Host+" driver"] = n.Driver
			m[n.Host+" kernel"] = n.Kernel
			m[n.Host+" active RDMA"] = strings.Join(n.ActiveRDMA, ",")
			m[n.Host+" netdevs"] = strings.Join(n.DataNetDevs, "; ")
		}
		return m
	}
	return diffMaps("node", get(a), get(b))
}

func diffRails(a, b *Plan) []string {
	get := func(p *Plan) map[string]string {
		m := map[string]string{}
		if p != nil {
			for _, r := range p.Rails {
				m[r.Name] = r.String()
			}
		}
		return m
	}
	return diffMaps("rail", get(a), get(b))
}

func diffMaps(what string, a, b map[string]string) []string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		if a[k] != b[k] {
			out = append(out, fmt.Sprintf("%s %s: %s → %s", what, k, orNone(a[k]), orNone(b[k])))
		}
	}
	sort.Strings(out)
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
