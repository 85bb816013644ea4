package report

import (
	"fmt"
	"strconv"
	"strings"
)

// FoldAbove is the host count above which a document summarises: hosts
// with the same findings are shown once (HostGroups) and the links that are
// ok are counted, not listed (ShownLinks). The JSON lists everything.
const FoldAbove = 32

// HostGroup is hosts whose findings have the same shape: the same checks
// with the same severities on the same subjects (the values seen may
// differ: each host's own address, say), or the same reason they were not
// audited.
type HostGroup struct {
	// Host is the index in Report.Hosts of the one shown in full, the
	// group's first in report order.
	Host int
	// Others are the rest of the group's host names, in report order.
	Others []string
}

// HostGroups is every host in a group of its own, up to FoldAbove hosts;
// above, hosts with the same shape of findings share a group, so ten
// thousand nodes of which seven differ are one group and the seven. Groups
// keep the report order of their first host.
func (r *Report) HostGroups() []HostGroup {
	var out []HostGroup
	if len(r.Hosts) <= FoldAbove {
		for i := range r.Hosts {
			out = append(out, HostGroup{Host: i})
		}
		return out
	}
	index := map[string]int{}
	for i, h := range r.Hosts {
		k := h.shape()
		if g, ok := index[k]; ok {
			out[g].Others = append(out[g].Others, h.Host)
			continue
		}
		index[k] = len(out)
		out = append(out, HostGroup{Host: i})
	}
	return out
}

// shape is what two hosts of one group share.
func (h Host) shape() string {
	var b strings.Builder
	b.WriteString(h.Status + "\x00" + h.Profile + "\x00" + strings.ReplaceAll(h.Error, h.Host, "") + "\x00" + strconv.FormatBool(h.SameAs != ""))
	for _, f := range h.Findings {
		b.WriteString("\x00" + f.ID + "\x01" + string(f.Severity) + "\x01" + strings.ReplaceAll(f.Subject, h.Host, ""))
	}
	for _, s := range h.Skipped {
		b.WriteString("\x00" + s.ID)
	}
	return b.String()
}

// ShownLinks is the links a document lists: every link, up to FoldAbove
// hosts' worth; above, only those that are not ok, with the number of ok
// links left out.
func (c *Cluster) ShownLinks(hosts int) (shown []Link, okLeftOut int) {
	if hosts <= FoldAbove {
		return c.Links, 0
	}
	for _, l := range c.Links {
		if l.OK() {
			okLeftOut++
		} else {
			shown = append(shown, l)
		}
	}
	return shown, okLeftOut
}

// HostRanges writes host names as a host list reads them back (pdsh-style,
// remote.ParseHostList), in the same order: a run of three or more names
// that differ only in a number counting up by one (node-00001, node-00002,
// node-00003, …) becomes one range (node-[00001-00003]), so a command line
// or a summary naming ten thousand nodes stays a line.
func HostRanges(hosts []string) string {
	var parts []string
	for i := 0; i < len(hosts); {
		pre, num, suf, ok := splitNumber(hosts[i])
		j := i + 1
		if ok {
			first, _ := strconv.Atoi(num)
			for j < len(hosts) {
				p, n, s, ok := splitNumber(hosts[j])
				v, _ := strconv.Atoi(n)
				if !ok || p != pre || s != suf || v != first+(j-i) || rangeValue(num, v) != n {
					break
				}
				j++
			}
		}
		if j-i < 3 || strings.ContainsAny(pre+suf, "[],") {
			parts = append(parts, hosts[i])
			j = i + 1
		} else {
			_, last, _, _ := splitNumber(hosts[j-1])
			parts = append(parts, pre+"["+num+"-"+last+"]"+suf)
		}
		i = j
	}
	return strings.Join(parts, ",")
}

// splitNumber cuts a host name around its last run of digits.
func splitNumber(h string) (pre, num, suf string, ok bool) {
	end := strings.LastIndexAny(h, "0123456789")
	if end < 0 {
		return h, "", "", false
	}
	start := end
	for start > 0 && h[start-1] >= '0' && h[start-1] <= '9' {
		start--
	}
	if end+1-start > 9 {
		return h, "", "", false // no range of such numbers is written
	}
	return h[:start], h[start : end+1], h[end+1:], true
}

// rangeValue is how a range whose low end is written lo writes v.
func rangeValue(lo string, v int) string {
	width := 0
	if len(lo) > 1 && lo[0] == '0' {
		width = len(lo)
	}
	return fmt.Sprintf("%0*d", width, v)
}

// maxNamesLine bounds the names a summary line spells out; the JSON names
// every host.
const maxNamesLine = 400

// Others is the line that stands for the group's other hosts under the one
// shown: "the same on 9992 more hosts: node-[00002-00005],node-[00007-…]".
func (g HostGroup) OthersLine() string {
	if len(g.Others) == 0 {
		return ""
	}
	// ", " between names, so the line wraps between them, not in a range
	names := strings.ReplaceAll(HostRanges(g.Others), ",", ", ")
	if len(names) > maxNamesLine {
		cut := strings.LastIndex(names[:maxNamesLine], ", ")
		if cut < 0 {
			cut = maxNamesLine
		}
		names = names[:cut] + ", … (the JSON names each)"
	}
	if len(g.Others) == 1 {
		return "the same on 1 more host: " + names
	}
	return fmt.Sprintf("the same on %d more hosts: %s", len(g.Others), names)
}
