package cluster

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

// hcaList parses NCCL_IB_HCA ("=mlx5_0:1,mlx5_1", "^mlx5_2") into its
// entries, keeping order; the prefix (= exact, ^ exclude) is kept on the first.
func hcaList(v string) []string {
	var out []string
	for _, e := range strings.Split(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// ibHCAOrder checks that NCCL_IB_HCA lists the same devices in the same
// order on every node that sets it (or on none), over the nodes whose NCCL
// settings were read.
func ibHCAOrder(nodes []*facts.Node) []report.Finding {
	var hosts, values []string
	for _, n := range nodes {
		if ncclKnown(n) {
			hosts = append(hosts, n.Host)
			values = append(values, strings.Join(hcaList(ncclSettings(n)["NCCL_IB_HCA"]), ","))
		}
	}
	if len(hosts) < 2 {
		return nil
	}
	s := spread(hosts, values)
	if len(s.Outliers) == 0 {
		if s.Majority == "" {
			return nil
		}
		return []report.Finding{{ID: "cluster.nccl-ib-hca-order", Severity: report.OK, Subject: "NCCL_IB_HCA", Title: "NCCL_IB_HCA in the same order on every node",
			Observed: fmt.Sprintf("%s on all %d nodes", s.Majority, len(hosts))}}
	}
	f := report.Finding{ID: "cluster.nccl-ib-hca-order", Severity: report.Warn, Subject: "NCCL_IB_HCA", Title: "NCCL_IB_HCA in the same order on every node",
		Observed: describeSpread(s, len(hosts)), Expected: "the same devices in the same order on every node",
		Why:    "NCCL pairs the n-th HCA of one node with the n-th of the other; a different list or order pairs devices that share no subnet",
		Remedy: report.Manual(report.ActionConfigure, fmt.Sprintf("export NCCL_IB_HCA=%s on every node (or the same line in /etc/nccl.conf)", show(s.Majority))),
		Source: "NVIDIA DGX Spark playbooks (NCCL_IB_HCA); community reports"}
	for v := range s.Outliers {
		if v != "" && s.Majority != "" && sameSet(hcaList(v), hcaList(s.Majority)) {
			f.Severity = report.Fail
			f.Observed = "same devices, different order: " + f.Observed
		}
	}
	return []report.Finding{f}
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	trim := func(s []string) {
		for i := range s {
			s[i] = strings.TrimLeft(s[i], "=^")
		}
		slices.Sort(s)
	}
	trim(x)
	trim(y)
	return slices.Equal(x, y)
}
