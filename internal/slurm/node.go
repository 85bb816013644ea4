package slurm

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Node is a node's state as `scontrol show node NAME --oneliner` gives it.
type Node struct {
	Name string
	// State is the base state and its flags: "IDLE+DRAIN", "MIXED+DRAIN".
	State string
	// Reason is the reason without the "[user@time]" scontrol appends, its
	// lines and runs of spaces joined by one space.
	Reason string
}

// Drained reports whether the node is drained or draining.
func (n Node) Drained() bool {
	for _, f := range strings.Split(n.State, "+") {
		if f == "DRAIN" || f == "DRAINED" || f == "DRAINING" {
			return true
		}
	}
	return false
}

// Down reports whether the node is down (its base state).
func (n Node) Down() bool {
	base, _, _ := strings.Cut(n.State, "+")
	return base == "DOWN"
}

// Ours reports whether the reason is sparkrig's.
func (n Node) Ours() bool { return strings.HasPrefix(n.Reason, Prefix) }

// ErrUnknownNode is a node name slurmctld does not know.
var ErrUnknownNode = errors.New("node not known to slurmctld")

// fieldOrder is every field `scontrol show node` prints, in the order it
// prints them: slurm_sprint_node_table in SchedMD/slurm src/api/node_info.c
// (@284c3b9, 2026-08-20), with the fields Slurm 22.05 printed and later
// releases dropped (CapWatts, ExtSensors*) in their places.
var fieldOrder = []string{
	"NodeName", "Arch", "CpuBind", "CoresPerSocket", "CPUAlloc", "CPUEfctv", "CPUTot", "CPULoad",
	"AvailableFeatures", "ActiveFeatures", "Gres", "GresDrain", "GresUsed", "NodeAddr", "NodeHostName",
	"BcastAddr", "Port", "Version", "OS", "RealMemory", "AllocMem", "FreeMem", "Sockets", "Boards",
	"CoreSpecCount", "CPUSpecList", "MemSpecLimit", "RestrictedCoresPerGPU", "State", "ThreadsPerCore",
	"TmpDisk", "Weight", "Owner", "MCS_label", "NextState", "Partitions", "BootTime", "SlurmdStartTime",
	"LastBusyTime", "ResumeAfterTime", "SuspendTime", "CfgTRES", "AllocTRES", "CapWatts", "CurrentWatts",
	"AveWatts", "ExtSensorsJoules", "ExtSensorsWatts", "ExtSensorsTemp", "Reason", "Comment", "Extra",
	"InstanceId", "InstanceType", "ReservationName", "TLSCertTokenSet", "TLSCertLastRenewal", "Topology",
	"Parameters",
}

var fieldRank = func() map[string]int {
	m := map[string]int{}
	for i, f := range fieldOrder {
		m[f] = i + 1
	}
	return m
}()

// freeText are the fields whose values may hold spaces and "Name=" text: a
// value runs on until a field that scontrol prints after it.
var freeText = map[string]bool{"OS": true, "Reason": true, "Comment": true, "Extra": true}

var (
	fieldStart = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=`)
	// scontrol appends " [user@time]" to the reason's first line.
	reasonStamp = regexp.MustCompile(` \[[^\[\]@]*@[^\[\]]*\]`)
)

// Fields splits one `scontrol show node --oneliner` line into its fields
// by name. A field starts at a word "Name=" after a space; inside a free
// text value (OS, Reason, Comment, Extra) only a field scontrol prints
// later ends it, so a reason holding "State=DOWN" stays the reason.
func Fields(line string) map[string]string {
	out := map[string]string{}
	cur := ""
	var val strings.Builder
	flush := func() {
		if cur != "" {
			if _, dup := out[cur]; !dup {
				out[cur] = strings.TrimSpace(val.String())
			}
		}
		val.Reset()
	}
	for i, w := range strings.Split(line, " ") {
		if m := fieldStart.FindStringSubmatch(w); m != nil && (i == 0 || startsField(cur, m[1])) {
			flush()
			cur = m[1]
			val.WriteString(w[len(m[0]):])
			continue
		}
		if cur != "" {
			val.WriteString(" " + w)
		}
	}
	flush()
	return out
}

// startsField reports whether name= begins a new field while reading cur.
func startsField(cur, name string) bool {
	if !freeText[cur] {
		return true
	}
	r, known := fieldRank[name]
	return known && r > fieldRank[cur]
}

// ParseNode reads `scontrol show node NAME --oneliner`: its first line, by
// field name.
func ParseNode(b []byte) (Node, error) {
	line, _, _ := bytes.Cut(bytes.TrimSpace(b), []byte("\n"))
	s := strings.TrimSpace(string(line))
	if strings.HasPrefix(s, "Node ") && strings.HasSuffix(s, " not found") {
		return Node{}, ErrUnknownNode
	}
	f := Fields(s)
	n := Node{Name: f["NodeName"], State: f["State"]}
	if !strings.HasPrefix(s, "NodeName=") || n.Name == "" || n.State == "" || strings.ContainsAny(n.Name+n.State, " \t") {
		return Node{}, fmt.Errorf("not scontrol show node output: %.80q", s)
	}
	reason := reasonStamp.ReplaceAllLiteralString(f["Reason"], "")
	n.Reason = strings.Join(strings.Fields(reason), " ")
	return n, nil
}
