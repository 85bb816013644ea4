package capture

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// hostileSecrets are secrets in valid syntax that a line-pattern redactor
// missed while the manifest said "redacted".
var hostileSecrets = []struct {
	name, path, in string
	keys           []string
}{
	{"netplan block scalar", "/etc/netplan/50-wifi.yaml",
		"network:\n  wifis:\n    wlan0:\n      access-points:\n        lab:\n          password: |\n            PLANTED-block\n", []string{"password"}},
	{"netplan folded scalar", "/etc/netplan/50-wifi.yaml",
		"network:\n  wifis:\n    wlan0:\n      access-points:\n        lab:\n          password: >-\n            PLANTED-folded\n", []string{"password"}},
	{"netplan value on the next line", "/etc/netplan/50-wifi.yaml",
		"network:\n  wifis:\n    wlan0:\n      access-points:\n        lab:\n          password:\n            PLANTED-next-line\n", []string{"password"}},
	{"netplan flow mapping", "/etc/netplan/50-wifi.yaml",
		"network: {wifis: {wlan0: {access-points: {lab: {password: PLANTED-flow}}}}}\n", []string{"password"}},
	{"netplan quoted key", "/etc/netplan/50-wifi.yaml",
		"network:\n  wifis:\n    wlan0:\n      access-points:\n        lab:\n          \"password\": 'PLANTED-quoted'\n", []string{"password"}},
	{"netplan auth flow", "/etc/netplan/60-8021x.yaml",
		"network:\n  ethernets:\n    enp1s0f1np1:\n      auth: {key-management: 802.1x, identity: spark, password: PLANTED-auth, client-key-password: PLANTED-ckp}\n",
		[]string{"password", "client-key-password"}},
	{"netplan wireguard keys", "/etc/netplan/70-wg.yaml",
		"network:\n  tunnels:\n    wg0:\n      mode: wireguard\n      keys: {private: PLANTED-wg-priv}\n      peers:\n        - keys: {public: rlbInAj0qV69CysWPQY7KEBnKxpYCpaWqOs/dLevdWc=, shared: PLANTED-wg-shared}\n          allowed-ips: [10.0.0.0/24]\n",
		[]string{"private", "shared"}},
	{"netplan tunnel key scalar", "/etc/netplan/70-wg.yaml",
		"network:\n  tunnels:\n    wg0:\n      mode: wireguard\n      key: PLANTED-wg-scalar\n", []string{"key"}},
	{"netplan alias", "/etc/netplan/50-wifi.yaml",
		"network:\n  wifis:\n    wlan0:\n      access-points:\n        lab: &ap\n          password: &pw PLANTED-anchored\n        lab5:\n          password: *pw\n", []string{"password", "password"}},
	{"netplan comment on the value", "/etc/netplan/50-wifi.yaml",
		"network:\n  wifis:\n    wlan0:\n      access-points:\n        lab:\n          password: x # PLANTED-in-comment\n", []string{"password"}},
	{"NetworkManager password-raw and mka-cak", "/etc/NetworkManager/system-connections/macsec.nmconnection",
		"[connection]\nid=m\ntype=macsec\n\n[802-1x]\npassword-raw=50;4c;41;4e;54;45;44\n\n[macsec]\nmode=0\nmka-cak = PLANTED-cak\nmka-ckn=0123456789abcdef\n",
		[]string{"password-raw", "mka-cak"}},
	{"NetworkManager wireguard", "/etc/NetworkManager/system-connections/wg0.nmconnection",
		"[connection]\nid=wg0\ntype=wireguard\n\n[wireguard]\nprivate-key=PLANTED-nm-wg\n\n[wireguard-peer.rlbInAj0qV69CysWPQY7KEBnKxpYCpaWqOs/dLevdWc=]\npreshared-key=PLANTED-nm-psk\nallowed-ips=10.0.0.0/24;\n",
		[]string{"private-key", "preshared-key"}},
	{"NetworkManager localised and gsm", "/etc/NetworkManager/system-connections/lte",
		"[gsm]\npin=PLANTED-pin\npassword[de]=PLANTED-de\napn=internet\n", []string{"pin", "password[de]"}},
	{"networkd MACsec Key=", "/etc/systemd/network/25-macsec.netdev",
		"[NetDev]\nName=macsec0\nKind=macsec\n\n[MACsecTransmitAssociation]\nPacketNumber=1\nKeyId=01\nKey=PLANTED-macsec-tx\n\n[MACsecReceiveAssociation]\nMACAddress=87:d5:6a:82:a6:63\nKey = PLANTED-macsec-rx\n",
		[]string{"Key", "Key"}},
	{"networkd continued value", "/etc/systemd/network/wg0.netdev",
		"[WireGuard]\nPrivateKey=PLANTED-part1\\\nPLANTED-part2\nListenPort=51820\n", []string{"PrivateKey"}},
	{"ifupdown continued value", "/etc/network/interfaces",
		"iface wlan0 inet dhcp\n\twpa-psk PLANTED-1\\\n PLANTED-2\n\twpa-ssid lab\n\twireless-key1 PLANTED-wep\n", []string{"wpa-psk", "wireless-key1"}},
}

// TestRedactHostileSyntax: every secret above is redacted, its key named,
// and the rest of the file means what it meant.
func TestRedactHostileSyntax(t *testing.T) {
	for _, c := range hostileSecrets {
		t.Run(c.name, func(t *testing.T) {
			got, keys, err := Redact(c.path, []byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(got), "PLANTED") {
				t.Errorf("a planted secret survived:\n%s", got)
			}
			if !slices.Equal(keys, c.keys) {
				t.Errorf("redacted %q, want %q", keys, c.keys)
			}
			if strings.HasSuffix(c.path, ".yaml") {
				sameYAMLBesideSecrets(t, c.in, string(got))
			}
		})
	}
}

// sameYAMLBesideSecrets checks the redacted YAML decodes to the original
// with each PLANTED value replaced by Redacted.
func sameYAMLBesideSecrets(t *testing.T, orig, redacted string) {
	t.Helper()
	var a, b any
	if err := yaml.Unmarshal([]byte(orig), &a); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(redacted), &b); err != nil {
		t.Fatalf("the redacted file is not YAML: %v\n%s", err, redacted)
	}
	if !reflect.DeepEqual(replacePlanted(a), b) {
		t.Errorf("the redacted file means something else:\n%v\n%v", replacePlanted(a), b)
	}
}

func replacePlanted(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = replacePlanted(e)
		}
	case []any:
		for i, e := range x {
			x[i] = replacePlanted(e)
		}
	case string:
		if strings.Contains(x, "PLANTED") || x == "x" {
			return Redacted
		}
	}
	return v
}

// A file that may hold secrets and cannot be parsed is not kept, and the
// manifest says so; one without secrets is kept byte for byte.
func TestUnparseableSecretFileIsNotKept(t *testing.T) {
	for p, in := range map[string]string{
		"/etc/netplan/50-broken.yaml":                     "network:\n  wifis: [\n    password: PLANTED\n",
		"/etc/NetworkManager/system-connections/broken":   "[wifi-security]\npsk PLANTED\n",
		"/etc/NetworkManager/system-connections/no-group": "psk=PLANTED\n",
		"/etc/systemd/network/broken.netdev":              "[WireGuard]\nPrivateKey PLANTED\n",
		"/etc/network/interfaces":                         "wpa-psk PLANTED\n",
	} {
		s := snapshot.New("spark-01")
		addFile(s, p, []byte(in))
		if _, ok := s.File(p); ok {
			t.Errorf("%s was kept", p)
		}
		it, _ := s.Item(snapshot.KindFile, p)
		if it.Status != snapshot.StatusError || !strings.HasPrefix(it.Error, "not kept: it may hold secrets and cannot be parsed") {
			t.Errorf("%s: manifest says %s %q", p, it.Status, it.Error)
		}
	}
	real := []byte("network:\n    version: 2\n    ethernets:\n        enp1s0f1np1:\n            mtu: 9000 # jumbo\n")
	s := snapshot.New("spark-01")
	addFile(s, "/etc/netplan/40-cx7.yaml", real)
	if b, _ := s.File("/etc/netplan/40-cx7.yaml"); !bytes.Equal(b, real) {
		t.Errorf("a netplan file without secrets changed: %q", b)
	}
}
