package capture

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRedactEveryFormat plants secrets in each configuration format the
// capture keeps and checks none survives, the keys are reported, and the
// network settings the checks read are untouched.
func TestRedactEveryFormat(t *testing.T) {
	for _, c := range []struct {
		file, as string
		keys     []string
		keep     []string
	}{
		{"nm-wifi.nmconnection", "/etc/NetworkManager/system-connections/lab-wifi.nmconnection",
			[]string{"psk", "password", "private-key-password", "IPSec secret"}, []string{"ssid=lab", "key-mgmt=wpa-psk", "method=auto"}},
		{"netplan-wifi-wg.yaml", "/etc/netplan/50-wifi.yaml",
			[]string{"password", "password", "private", "shared"}, []string{"addresses: [192.168.100.10/24]", "mtu: 9000", "public: rlbInAj0qV69CysWPQY7KEBnKxpYCpaWqOs/dLevdWc="}},
		{"wg0.netdev", "/etc/systemd/network/wg0.netdev",
			[]string{"PrivateKey", "PresharedKey"}, []string{"ListenPort=51820", "AllowedIPs=10.0.0.0/24"}},
		{"interfaces", "/etc/network/interfaces",
			[]string{"wpa-psk"}, []string{"wpa-ssid lab", "address 192.168.100.10/24", "mtu 9000"}},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", "secrets", c.file))
		if err != nil {
			t.Fatal(err)
		}
		got, keys, err := Redact(c.as, b)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if strings.Contains(string(got), "PLANTED") {
			t.Errorf("%s: a planted secret survived:\n%s", c.file, got)
		}
		if !slices.Equal(keys, c.keys) {
			t.Errorf("%s: redacted %q, want %q", c.file, keys, c.keys)
		}
		for _, k := range c.keep {
			if !strings.Contains(string(got), k) {
				t.Errorf("%s: %q was lost", c.file, k)
			}
		}
	}
	// Files no rule covers are kept byte for byte.
	if got, keys, err := Redact("/etc/nccl.conf", []byte("NCCL_IB_HCA=rocep1s0f1\n")); string(got) != "NCCL_IB_HCA=rocep1s0f1\n" || keys != nil || err != nil {
		t.Errorf("nccl.conf changed: %q %v %v", got, keys, err)
	}
}

func FuzzRedact(f *testing.F) {
	for _, c := range hostileSecrets {
		f.Add([]byte(c.in))
	}
	for _, n := range []string{"nm-wifi.nmconnection", "netplan-wifi-wg.yaml", "wg0.netdev", "interfaces"} {
		b, err := os.ReadFile(filepath.Join("testdata", "secrets", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, p := range []string{"/etc/netplan/x.yaml", "/etc/NetworkManager/system-connections/x", "/etc/systemd/network/x", "/etc/network/interfaces"} {
			got, keys, err := Redact(p, b)
			if err != nil {
				if got != nil {
					t.Fatalf("%s: bytes returned with %v", p, err)
				}
				continue
			}
			if len(keys) == 0 && string(got) != string(b) {
				t.Fatalf("%s changed with nothing redacted", p)
			}
			if len(keys) == 0 {
				continue
			}
			// The redacted file parses as its format, its secret keys now
			// hold Redacted (an anchored key named by an alias under a
			// secret key is itself redacted, so fewer may be found) and,
			// outside YAML, redacting it again changes nothing.
			again, keys2, err := Redact(p, got)
			if err != nil || len(keys2) > len(keys) || !strings.HasPrefix(p, "/etc/netplan/") && !slices.Equal(keys, keys2) {
				t.Fatalf("%s: redacting again: %v, keys %q then %q\n%s", p, err, keys, keys2, got)
			}
			if !strings.HasPrefix(p, "/etc/netplan/") && !bytes.Equal(again, got) {
				t.Fatalf("%s: redacting again changed\n%s\ninto\n%s", p, got, again)
			}
		}
	})
}

// TestRedactCommentedSecrets: a secret left behind in a comment ("# old
// password: …", "#psk=…", "# PrivateKey=…") is redacted like a live one,
// the comment and its key kept; comments that set no secret are kept whole.
func TestRedactCommentedSecrets(t *testing.T) {
	for _, c := range []struct {
		as, in string
		keys   []string
		keep   []string
	}{
		{"/etc/netplan/50-wifi.yaml",
			"network:\n  wifis:\n    wlan0:\n      access-points:\n        lab:\n          # password: PLANTED-old-wifi\n          password: PLANTED-live\n      # shared: PLANTED-psk\n      dhcp4: true # keep me\n",
			[]string{"password", "# password", "# shared"}, []string{"# password: " + Redacted, "dhcp4: true", "# keep me"}},
		{"/etc/netplan/40-cx7.yaml",
			"network:\n  ethernets:\n    enp1s0f1np1:\n      #   password: \"PLANTED\"\n      # addresses: [192.168.100.10/24]\n      mtu: 9000\n",
			[]string{"# password"}, []string{"# addresses: [192.168.100.10/24]", "mtu: 9000"}},
		{"/etc/NetworkManager/system-connections/lab.nmconnection",
			"[wifi-security]\nkey-mgmt=wpa-psk\n#psk=PLANTED-old\n;  password = PLANTED-semicolon\n# ssid=lab\n",
			[]string{"# psk", "# password"}, []string{"#psk=" + Redacted, "key-mgmt=wpa-psk", "# ssid=lab"}},
		{"/etc/systemd/network/wg0.netdev",
			"[WireGuard]\n# PrivateKey=PLANTEDPLANTEDPLANTED=\nListenPort=51820\n# ListenPort=1\n",
			[]string{"# PrivateKey"}, []string{"# PrivateKey=" + Redacted, "ListenPort=51820", "# ListenPort=1"}},
		{"/etc/network/interfaces",
			"iface wlan0 inet dhcp\n    wpa-ssid lab\n#   wpa-psk PLANTED-old\n# wpa-ssid old-lab\n",
			[]string{"# wpa-psk"}, []string{"wpa-psk " + Redacted, "# wpa-ssid old-lab"}},
	} {
		got, keys, err := Redact(c.as, []byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.as, err)
		}
		if strings.Contains(string(got), "PLANTED") {
			t.Errorf("%s: a commented secret survived:\n%s", c.as, got)
		}
		if !slices.Equal(keys, c.keys) {
			t.Errorf("%s: redacted %q, want %q", c.as, keys, c.keys)
		}
		for _, k := range c.keep {
			if !strings.Contains(string(got), k) {
				t.Errorf("%s: %q was lost:\n%s", c.as, k, got)
			}
		}
	}
}
