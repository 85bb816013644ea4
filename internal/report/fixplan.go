package report

// FixPlan is `sparkrig fix --plan` as rendered: per host, the rails fix
// addresses, the files it would write, each with its unified diff, and the
// activation a node needs to run files that are already right; then every
// warn or fail finding no change resolves, with its manual remedy.
type FixPlan struct {
	Topology   string     `json:"topology"`
	Addressing string     `json:"addressing"`
	Hosts      []FixHost  `json:"hosts"`
	Env        []EnvVar   `json:"env,omitempty"`
	Notes      []PlanNote `json:"notes,omitempty"`
	// Manual are the warn and fail findings no change resolves: each needs
	// a person, as its remedy says.
	Manual []Finding `json:"manual,omitempty"`
}

// FixHost is one node's part of a fix plan.
type FixHost struct {
	Host  string    `json:"host"`
	Rails []FixRail `json:"rails"`
	Files []FixFile `json:"files"`
	// Protected lists the interfaces fix never touches on this host.
	Protected []string `json:"protected"`
	Notes     []string `json:"notes,omitempty"`
	// Reactivate is set where the files are right but the node does not
	// run them: activating them in place is the change.
	Reactivate *FixActivation `json:"reactivate,omitempty"`
}

// FixActivation makes a node run the rails its files already hold.
type FixActivation struct {
	Command  string `json:"command"` // "netplan apply"
	Why      string `json:"why"`     // what the live state lacks
	Resolves []Key  `json:"resolves,omitempty"`
}

// FixRail is one addressed ConnectX netdev and the peers it faces.
type FixRail struct {
	NetDev  string   `json:"netdev"`
	RDMADev string   `json:"rdma_dev,omitempty"`
	Addr    string   `json:"addr,omitempty"` // empty for link-local
	MTU     int      `json:"mtu"`
	Peers   []string `json:"peers"` // "host:netdev"
	// Change says how the address was chosen: "keep …", "new: …" or "was …: why".
	Change string     `json:"change,omitempty"`
	Routes []FixRoute `json:"routes,omitempty"`
}

// FixRoute sends traffic for a subnet through a neighbour.
type FixRoute struct {
	To  string `json:"to"`
	Via string `json:"via"`
}

// FixFile is one file fix would write: whether it changes, why, the
// findings it resolves, and the unified diff of the change.
type FixFile struct {
	Path     string `json:"path"`
	Mode     uint32 `json:"mode"`
	Changed  bool   `json:"changed"`
	Why      string `json:"why"`
	Resolves []Key  `json:"resolves,omitempty"`
	Diff     string `json:"diff,omitempty"`
}

// Changes counts the plan's changes: files that would change and
// activations.
func (p *FixPlan) Changes() int {
	n := 0
	for _, h := range p.Hosts {
		for _, f := range h.Files {
			if f.Changed {
				n++
			}
		}
		if h.Reactivate != nil {
			n++
		}
	}
	return n
}

// EnvVar is one variable of the environment a cluster's jobs need.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// PlanNote is a remark on a plan: where the facts forced a compromise, and
// what to do about it.
type PlanNote struct {
	ID     string `json:"id,omitempty"`
	Host   string `json:"host,omitempty"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}
