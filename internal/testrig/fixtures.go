package testrig

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/sparkrig/sparkrig/internal/shell"
)

// Standin replays recorded output for a program the rig cannot run for real
// (nvidia-smi, ibdev2netdev, ...). It is installed as an executable script in
// /usr/local/bin on its host only, and says in its text that it is a stand-in.
type Standin struct {
	// Name is the executable's name ("nvidia-smi").
	Name string
	// Outputs maps the exact argument string ("-q", "topo -m", "" for no
	// arguments) to the recorded stdout; "*" matches any other arguments.
	// Arguments with no recorded output make the stand-in exit 2.
	Outputs map[string]string
	// Exit is the exit status after printing a recorded output.
	Exit int
}

// writeFixtures writes the host's fixture root: its Files, its stand-ins and
// the directories every host needs.
func (h *Host) writeFixtures() error {
	root := filepath.Join(h.Dir, "root")
	for _, d := range []string{"etc", "root", "run/sshd"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	// A clean root shell start-up: hosts must not inherit this machine's
	// /root/.bashrc (which bash sources for every SSH command).
	for _, f := range []string{"root/.bashrc", "root/.profile"} {
		if err := writeFile(filepath.Join(root, f), []byte("# sparkrig test rig host: clean shell start-up\n"), 0o644); err != nil {
			return err
		}
	}
	// Every host its own machine id, as installed machines have (a test
	// that clones one sets /etc/machine-id in Files).
	id := sha256.Sum256([]byte(h.Dir))
	if err := writeFile(filepath.Join(root, "etc/machine-id"), []byte(hex.EncodeToString(id[:16])+"\n"), 0o444); err != nil {
		return err
	}
	for _, p := range sortedKeys(h.spec.Files) {
		clean := path.Clean("/" + p)
		if clean == "/" || strings.Contains(clean, "\n") {
			return fmt.Errorf("host %s: bad fixture path %q", h.Name, p)
		}
		if err := writeFile(filepath.Join(root, clean), []byte(h.spec.Files[p]), 0o644); err != nil {
			return err
		}
	}
	for _, s := range h.spec.Standins {
		if err := h.writeStandin(root, s); err != nil {
			return err
		}
	}
	var err error
	if h.pciMount, err = h.writePCIStandins(root, h.links); err != nil {
		return err
	}
	if h.spec.RDMA {
		return h.writeRDMAStandins(root, h.links)
	}
	return nil
}

func (h *Host) writeStandin(root string, s Standin) error {
	if s.Name == "" || strings.ContainsAny(s.Name, "/ '") {
		return fmt.Errorf("host %s: bad stand-in name %q", h.Name, s.Name)
	}
	outDir := filepath.Join(h.Dir, "standin", s.Name)
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n# sparkrig test rig standin for %s on host %s: replays recorded output; it is not the real program.\ncase \"$*\" in\n", s.Name, h.Name)
	fallback := fmt.Sprintf("*) echo 'standin %s: no recorded output for these arguments:' \"$*\" >&2; exit 2 ;;\n", s.Name)
	for i, args := range sortedKeys(s.Outputs) {
		out := filepath.Join(outDir, fmt.Sprintf("%d.out", i))
		if err := writeFile(out, []byte(s.Outputs[args]), 0o644); err != nil {
			return err
		}
		line := fmt.Sprintf("cat '%s'; exit %d ;;\n", out, s.Exit)
		if args == "*" {
			fallback = "*) " + line
			continue
		}
		fmt.Fprintf(&b, "%s) %s", shell.Quote(args), line)
	}
	b.WriteString(fallback + "esac\n")
	return writeFile(filepath.Join(root, "usr/local/bin", s.Name), []byte(b.String()), 0o755)
}
