// Package snapshot defines the evidence a capture collects from one node and
// stores it as a directory or a .tar.gz archive.
//
// A snapshot holds exactly two kinds of evidence: files (read from /sys, /proc,
// /etc, ...; symlinks are recorded with their target) and command outputs
// (stdout, stderr and exit status of a fixed, documented command list). Every
// item the capture tried is listed in the manifest with its status, so a
// missing tool or file is distinguishable from an empty one.
//
// On disk (directory or archive):
//
//	manifest.json             Manifest
//	files/<path>              content of the absolute path <path> ("files/proc/meminfo")
//	cmds/<id>.stdout          stdout of command <id>
//	cmds/<id>.stderr          stderr of command <id> (omitted when empty)
//
// The same layout is produced by the local capture, by the POSIX sh capture
// script run over SSH, and is used by the test fixture trees.
package snapshot

import (
	"fmt"
	"path"
	"strings"
	"time"
)

// SchemaVersion is the manifest schema this package reads and writes.
const SchemaVersion = 1

// Item kinds.
const (
	KindFile = "file"
	KindLink = "link"
	KindCmd  = "cmd"
)

// Item statuses.
const (
	StatusOK      = "ok"      // captured (a command may still have exited non-zero)
	StatusMissing = "missing" // file absent, or command not installed
	StatusDenied  = "denied"  // permission denied
	StatusError   = "error"   // any other failure (I/O error)
	// StatusTimedOut is a command that ran past its deadline and was killed:
	// the tool is there but did not answer (a hung nvidia-smi), never absent.
	StatusTimedOut = "timed-out"
)

// Item is one piece of evidence the capture tried to collect.
type Item struct {
	Kind string `json:"kind"`
	// Name is the absolute path for files and links, the command id for commands.
	Name string `json:"name"`
	// Argv is the command line that was run (commands only).
	Argv     []string `json:"argv,omitempty"`
	Status   string   `json:"status"`
	Error    string   `json:"error,omitempty"`
	ExitCode int      `json:"exit_code,omitempty"`
	// Target is a symlink's target as read by readlink (links only).
	Target     string `json:"target,omitempty"`
	Size       int64  `json:"size,omitempty"`
	DurationMS int64  `json:"duration_ms,omitempty"`
	// Redacted names the keys whose values the capture replaced, so a
	// snapshot can be attached to a bug report (files only).
	Redacted []string `json:"redacted,omitempty"`
}

// Manifest describes a snapshot: where and when it was taken, by what, and the
// status of every item.
type Manifest struct {
	Schema      int       `json:"schema"`
	Host        string    `json:"host"`
	CapturedAt  time.Time `json:"captured_at"`
	ToolVersion string    `json:"tool_version"`
	// Capturer is "sparkrig" for the built-in capture, "sh" for the remote script.
	Capturer   string `json:"capturer"`
	OS         string `json:"os,omitempty"`
	Arch       string `json:"arch,omitempty"`
	User       string `json:"user,omitempty"`
	DurationMS int64  `json:"duration_ms,omitempty"`
	// Anonymized: host names, MACs and public addresses were replaced by
	// stand-ins (sparkrig snapshot --anonymize).
	Anonymized bool   `json:"anonymized,omitempty"`
	Items      []Item `json:"items"`
}

// Snapshot is a node's evidence in memory.
type Snapshot struct {
	Manifest Manifest
	// Data maps a storage key ("files/proc/meminfo", "cmds/uname.stdout") to its bytes.
	Data map[string][]byte
	// Source names where the snapshot was read from ("" for a live capture).
	Source string

	ix index
}

// New returns an empty snapshot for host.
func New(host string) *Snapshot {
	return &Snapshot{
		Manifest: Manifest{Schema: SchemaVersion, Host: host, Items: []Item{}},
		Data:     map[string][]byte{},
	}
}

// FileKey is the storage key of the absolute path p.
func FileKey(p string) string { return "files/" + Abs(p)[1:] }

// Abs is path.Clean("/" + p), without its byte-by-byte copy where p is
// already a clean absolute path (every name a capture records).
func Abs(p string) string {
	if isCleanAbs(p) {
		return p
	}
	return path.Clean("/" + p)
}

// isCleanAbs says path.Clean(p) == p for p starting with "/".
func isCleanAbs(p string) bool {
	if p == "/" {
		return true
	}
	if !strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
		return false
	}
	for i := 0; i < len(p); {
		j := strings.IndexByte(p[i+1:], '/') + i + 1 // the next separator, or i when none
		if j == i {
			j = len(p)
		}
		if e := p[i+1 : j]; e == "" || e == "." || e == ".." {
			return false
		}
		i = j
	}
	return true
}

// CmdKey is the storage key of a command's stream ("stdout" or "stderr").
func CmdKey(id, stream string) string { return "cmds/" + id + "." + stream }

// AddFile records a file that was read.
func (s *Snapshot) AddFile(p string, data []byte) {
	p = Abs(p)
	if data == nil {
		data = []byte{}
	}
	s.Data[FileKey(p)] = data
	s.Manifest.Items = append(s.Manifest.Items, Item{Kind: KindFile, Name: p, Status: StatusOK, Size: int64(len(data))})
}

// AddLink records a symlink and its target.
func (s *Snapshot) AddLink(p, target string) {
	s.Manifest.Items = append(s.Manifest.Items, Item{Kind: KindLink, Name: Abs(p), Status: StatusOK, Target: target})
}

// AddMissing records an item that could not be captured, with its status and error text.
func (s *Snapshot) AddMissing(kind, name, status, errText string) {
	if kind != KindCmd {
		name = Abs(name)
	}
	s.Manifest.Items = append(s.Manifest.Items, Item{Kind: kind, Name: name, Status: status, Error: errText})
}

// AddCmd records a command's outcome. A command that ran, whatever its exit
// code, has status ok; one whose executable was not found has status missing.
func (s *Snapshot) AddCmd(it Item, stdout, stderr []byte) {
	it.Kind = KindCmd
	if it.Status == "" {
		it.Status = StatusOK
	}
	it.Size = int64(len(stdout))
	if stdout == nil {
		stdout = []byte{}
	}
	s.Data[CmdKey(it.Name, "stdout")] = stdout
	if len(stderr) > 0 {
		s.Data[CmdKey(it.Name, "stderr")] = stderr
	}
	s.Manifest.Items = append(s.Manifest.Items, it)
}

// Item returns the manifest entry of the given kind and name.
func (s *Snapshot) Item(kind, name string) (Item, bool) {
	if kind != KindCmd {
		name = Abs(name)
	}
	if i := s.itemIndex(kind, name); i >= 0 {
		return s.Manifest.Items[i], true
	}
	return Item{}, false
}

// Size is the number of bytes of data the snapshot holds.
func (s *Snapshot) Size() int64 {
	var n int64
	for _, b := range s.Data {
		n += int64(len(b))
	}
	return n
}

// Release drops the data of every key keep refuses, once the facts are
// read, so that a run holds only what it still uses; the manifest stays.
func (s *Snapshot) Release(keep func(key string) bool) {
	for k := range s.Data {
		if !keep(k) {
			delete(s.Data, k)
		}
	}
}

// File returns the content of the absolute path p and whether it was captured.
func (s *Snapshot) File(p string) ([]byte, bool) {
	b, ok := s.Data[FileKey(p)]
	return b, ok
}

// Link returns the target of the symlink p and whether it was captured.
func (s *Snapshot) Link(p string) (string, bool) {
	it, ok := s.Item(KindLink, p)
	if !ok || it.Kind != KindLink {
		return "", false
	}
	return it.Target, true
}

// Cmd returns a command's outcome. ok is false when the command was not run or
// not found; inspect Item for the reason.
func (s *Snapshot) Cmd(id string) (stdout []byte, it Item, ok bool) {
	it, found := s.Item(KindCmd, id)
	if !found || it.Status != StatusOK {
		return nil, it, false
	}
	return s.Data[CmdKey(id, "stdout")], it, true
}

// Stderr returns a command's captured stderr.
func (s *Snapshot) Stderr(id string) []byte { return s.Data[CmdKey(id, "stderr")] }

// List returns the captured paths (files and links) directly under dir, sorted.
func (s *Snapshot) List(dir string) []string {
	dir = Abs(dir)
	if dir != "/" {
		dir += "/"
	}
	return s.children(dir)
}

// Validate reports the first structural problem of a snapshot read from disk.
func (s *Snapshot) Validate() error {
	m := s.Manifest
	if m.Schema == 0 {
		return fmt.Errorf("manifest has no schema version")
	}
	if m.Schema < 0 {
		return fmt.Errorf("manifest schema %d is not a version", m.Schema)
	}
	if m.Schema > SchemaVersion {
		return fmt.Errorf("manifest schema %d is newer than this sparkrig understands (%d)", m.Schema, SchemaVersion)
	}
	if m.Host == "" {
		return fmt.Errorf("manifest names no host")
	}
	for _, it := range m.Items {
		switch it.Kind {
		case KindFile, KindLink, KindCmd:
		default:
			return fmt.Errorf("manifest item %q has unknown kind %q", it.Name, it.Kind)
		}
		if it.Kind == KindFile && it.Status == StatusOK {
			if _, ok := s.Data[FileKey(it.Name)]; !ok {
				return fmt.Errorf("manifest lists %s but the snapshot holds no such file", it.Name)
			}
		}
	}
	return nil
}

// SafeName turns a host name into a file name: letters, digits, '.', '-'
// and '_' are kept, anything else (a '/', ':' of user@host:port, ...) becomes '_'.
func SafeName(host string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, host)
}
