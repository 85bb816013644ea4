package report

// RemedyKind says who carries a remedy out.
type RemedyKind string

// Remedy kinds.
const (
	// RemedyChange is made by `sparkrig fix --apply`: file edits and live actions.
	RemedyChange RemedyKind = "change"
	// RemedyManual needs a person: hardware, firmware, a library upgrade, a
	// job's environment, a command sparkrig does not run for you.
	RemedyManual RemedyKind = "manual"
)

// Remedy is what resolves a finding. It is made once per run, from the
// cluster model and the known-issues data, and every output renders it as
// it is: the doctor's text, `fix --plan`, JSON, Markdown and HTML.
type Remedy struct {
	Kind RemedyKind `json:"kind"`
	// Command carries out a change remedy ("sparkrig fix --apply --hosts a,b").
	Command string `json:"command,omitempty"`
	// Changes are what fix writes or does on each node, for RemedyChange.
	Changes []Change `json:"changes,omitempty"`
	// Steps are what a person does, in order, for RemedyManual.
	Steps []Step `json:"steps,omitempty"`
	// Requires lists preconditions ("PEER: the node at the other end of the cable").
	Requires []string `json:"requires,omitempty"`
}

// Change is one edit or live action `sparkrig fix` makes on one node.
type Change struct {
	Host string `json:"host"`
	// Path is the file written; Diff its unified diff (without file headers).
	Path string `json:"path,omitempty"`
	Diff string `json:"diff,omitempty"`
	// Action is a live command run after the files are written ("netplan apply").
	Action string `json:"action,omitempty"`
}

// Action is the kind of thing a person does.
type Action string

// Actions of manual steps.
const (
	ActionRun        Action = "run"         // run the commands given
	ActionConfigure  Action = "configure"   // change a setting by hand (job environment, a config file)
	ActionUpgrade    Action = "upgrade"     // a library, driver or kernel to a named version
	ActionFirmware   Action = "firmware"    // BIOS, UEFI or NIC firmware update
	ActionCable      Action = "cable"       // seat, re-plug or replace a cable or transceiver
	ActionPowerCycle Action = "power-cycle" // AC power off and on (not a reboot)
	ActionReboot     Action = "reboot"
	ActionInspect    Action = "inspect" // look at something sparkrig cannot see
)

// Step is one thing a person does.
type Step struct {
	Action Action `json:"action"`
	// Text says what to do; commands inside it are exact.
	Text string `json:"text"`
}

// Manual is a remedy of one step a person takes.
func Manual(a Action, text string) *Remedy {
	return &Remedy{Kind: RemedyManual, Steps: []Step{{Action: a, Text: text}}}
}
