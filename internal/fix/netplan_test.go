package fix

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNetplanGenerate runs Debian's real `netplan generate` on every
// generated file and checks what it makes of it for systemd-networkd: each
// rail's address and MTU 9000, and link-local IPv4 where asked.
func TestNetplanGenerate(t *testing.T) {
	bin, err := exec.LookPath("netplan")
	if err != nil {
		t.Skip("netplan binary not found (install netplan.io); the generated files are not validated")
	}
	for _, tc := range topoCases {
		for _, h := range buildCase(t, tc).Hosts {
			t.Run(tc.name+"/"+h.Host, func(t *testing.T) {
				root := t.TempDir()
				dst := filepath.Join(root, NetplanPath)
				if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(dst, fileOf(t, h, NetplanPath), 0o600); err != nil {
					t.Fatal(err)
				}
				out, err := exec.Command(bin, "generate", "--root-dir", root).CombinedOutput()
				if err != nil {
					t.Fatalf("netplan generate: %v\n%s", err, out)
				}
				for _, r := range h.Rails {
					network := readGenerated(t, root, "10-netplan-"+r.NetDev+".network")
					link := readGenerated(t, root, "10-netplan-"+r.NetDev+".link")
					if !strings.Contains(link, "MTUBytes=9000\n") {
						t.Errorf("%s.link lacks MTUBytes=9000:\n%s", r.NetDev, link)
					}
					want := "Address=" + r.Addr + "\n"
					if r.Addr == "" {
						want = "LinkLocalAddressing=yes\n"
					}
					if !strings.Contains(network, want) {
						t.Errorf("%s.network lacks %q:\n%s", r.NetDev, want, network)
					}
					for _, rt := range r.Routes {
						if want := "[Route]\nDestination=" + rt.To + "\nGateway=" + rt.Via + "\n"; !strings.Contains(network, want) {
							t.Errorf("%s.network lacks %q:\n%s", r.NetDev, want, network)
						}
					}
				}
			})
		}
	}
}

func readGenerated(t *testing.T, root, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "run/systemd/network", name))
	if err != nil {
		t.Fatalf("netplan generated no %s: %v", name, err)
	}
	return string(b)
}
