package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// Redacted replaces every secret value a snapshot would otherwise carry.
const Redacted = "<redacted by sparkrig>"

// A redactor parses one configuration format with its real syntax and
// replaces the value of every secret-bearing key of that format, wherever
// and however it is written. It fails on a file it cannot parse: such a
// file is not kept, since what it hides cannot be known.
type redactor func(b []byte) (out []byte, keys []string, err error)

// redactors are the data: one entry per configuration format the capture
// keeps that can hold a secret, with the format's own documentation for the
// list of keys.
var redactors = []struct {
	files  []string // path.Match patterns
	redact redactor
	// commented is the secret a commented-out line still shows: the name
	// of the key it sets, or "" (an old password left behind as
	// "# password: …" or "#psk=…" is as much a secret as a live one).
	commented func(line string) (key string, value int)
}{
	// netplan: Wi-Fi access points' "password", the auth block's "password"
	// and "client-key-password" (netplan(5), "Authentication":
	// https://manpages.ubuntu.com/manpages/jammy/en/man5/netplan.5.html; the
	// same fields in https://docs.rs/netplan-types/latest/netplan_types/struct.AuthConfig.html),
	// and WireGuard tunnels' keys: "private" and the peers' "shared" (netplan(5),
	// "Properties for device type tunnels"), or a tunnel's key given as one scalar.
	{[]string{"/etc/netplan/*"}, redactNetplan, commentedNetplan},
	// NetworkManager keyfiles (nm-settings-keyfile(5): GLib key files): every
	// property nm-settings(5) marks as a secret — 802-1x password,
	// password-raw, pin, private-key(-password), phase2-private-key-password,
	// ca-cert-password, client-cert-password and their phase2- forms
	// (https://networkmanager.dev/docs/api/1.40/settings-802-1x.html);
	// wifi-security psk, leap-password, wep-key0..3
	// (https://networkmanager.dev/docs/api/1.42.4/settings-802-11-wireless-security.html);
	// macsec mka-cak (https://developer.gnome.org/NetworkManager/1.14/settings-macsec.html);
	// wireguard private-key and peers' preshared-key; the password of pppoe,
	// gsm, cdma and adsl, gsm pin; and the whole [vpn-secrets] group.
	{[]string{"/etc/NetworkManager/system-connections/*"}, redactKeyfile, commentedKeyfile},
	// systemd-networkd (systemd.netdev(5)): [WireGuard] PrivateKey=,
	// [WireGuardPeer] PresharedKey=, and the MACsec associations' Key=
	// ([MACsecTransmitAssociation], [MACsecReceiveAssociation];
	// https://github.com/systemd/systemd/commit/19196a53631185ff035e653f295d2d04861c1410).
	{[]string{"/etc/systemd/network/*"}, redactNetworkd, commentedNetworkd},
	// ifupdown (interfaces(5)) with the wpasupplicant options of its
	// debian/README.Debian and README.modes (wpa-psk, wpa-password,
	// wpa-wep-key0..3, and the private keys' passwords;
	// https://bazaar.launchpad.net/~ubuntu-branches/ubuntu/lucid/wpasupplicant/lucid-updates/revision/2.1.15/debian/README.modes)
	// and wireless-tools' wireless-key, wireless-key1..4.
	{[]string{"/etc/network/interfaces", "/etc/network/interfaces.d/*"}, redactIfupdown, commentedIfupdown},
}

// Redact returns b with the values of secret keys replaced, and the keys it
// replaced, for a file at p. Files no format covers are returned as they
// are. An error means the file is one that may hold secrets but could not
// be parsed: it must not be kept.
func Redact(p string, b []byte) ([]byte, []string, error) {
	for _, r := range redactors {
		for _, pat := range r.files {
			if !strings.HasPrefix(p, literalPrefix(pat)) {
				continue // most files a capture reads are in /sys and /proc
			}
			if ok, _ := path.Match(pat, p); ok {
				out, keys, err := r.redact(b)
				if err != nil {
					return nil, nil, err
				}
				if len(keys) == 0 {
					out = b
				}
				out, ckeys := redactCommented(out, r.commented)
				keys = append(keys, ckeys...)
				if len(keys) == 0 {
					return b, nil, nil
				}
				return out, keys, nil
			}
		}
	}
	return b, nil, nil
}

// literalPrefix is what every name pat matches starts with: pat up to its
// first special character.
func literalPrefix(pat string) string {
	if i := strings.IndexAny(pat, `*?[\\`); i >= 0 {
		return pat[:i]
	}
	return pat
}

// addFile stores a captured file with its secrets redacted, and says in the
// manifest which keys were; a file that cannot be parsed to redact it is
// recorded as not kept, with why.
func addFile(s *snapshot.Snapshot, p string, b []byte) {
	b, keys, err := Redact(p, b)
	if err != nil {
		s.AddMissing(snapshot.KindFile, p, snapshot.StatusError, "not kept: it may hold secrets and cannot be parsed to redact them ("+err.Error()+")")
		return
	}
	s.AddFile(p, b)
	if len(keys) > 0 {
		s.Manifest.Items[len(s.Manifest.Items)-1].Redacted = keys
	}
}

// netplanSecret are the netplan keys whose values are secrets wherever they
// appear; netplanTunnelKey the tunnel key that is one when it is a scalar.
var netplanSecret = map[string]bool{"password": true, "client-key-password": true, "private": true, "shared": true}

func redactNetplan(b []byte) ([]byte, []string, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var docs []*yaml.Node
	var keys []string
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("YAML: %w", err)
		}
		walkNetplan(&doc, false, &keys)
		docs = append(docs, &doc)
	}
	if len(keys) == 0 {
		return b, nil, nil
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return nil, nil, fmt.Errorf("YAML: %w", err)
		}
	}
	if err := enc.Close(); err != nil {
		return nil, nil, fmt.Errorf("YAML: %w", err)
	}
	return out.Bytes(), keys, nil
}

// walkNetplan redacts, in every mapping of the tree, the values of secret
// keys (a scalar, a block scalar, a flow or block mapping or list, or an
// alias and the anchored value it names).
func walkNetplan(n *yaml.Node, inTunnel bool, keys *[]string) {
	if n.Kind != yaml.MappingNode {
		for _, c := range n.Content {
			walkNetplan(c, inTunnel, keys)
		}
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		secret := netplanSecret[k.Value] || inTunnel && (k.Value == "key" || k.Value == "keys") && resolve(v).Kind == yaml.ScalarNode
		if secret {
			*keys = append(*keys, k.Value)
			if v.Kind == yaml.AliasNode && v.Alias != nil {
				redactValues(v.Alias, map[*yaml.Node]bool{})
			}
			redactNode(v)
			k.LineComment, k.FootComment = "", ""
			continue
		}
		walkNetplan(v, inTunnel || k.Value == "tunnels", keys)
	}
}

func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// redactValues redacts what an alias under a secret key names: the
// anchored scalar, or every scalar value (not key) of an anchored mapping
// or list, which may even hold the alias itself.
func redactValues(n *yaml.Node, seen map[*yaml.Node]bool) {
	if seen[n] {
		return
	}
	seen[n] = true
	switch n.Kind {
	case yaml.ScalarNode:
		redactNode(n)
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			redactValues(n.Content[i], seen)
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		for _, c := range n.Content {
			redactValues(c, seen)
		}
	case yaml.AliasNode:
		if n.Alias != nil {
			redactValues(n.Alias, seen)
		}
	}
}

func redactNode(n *yaml.Node) {
	anchor := n.Anchor
	*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: Redacted, Style: yaml.DoubleQuotedStyle, Anchor: anchor}
}

// keyfileSecret matches the NetworkManager properties that are secrets (see
// redactors); a locale suffix ("key[de]") is matched without it.
var keyfileSecret = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(psk|pin|password|password-raw|leap-password|wep-key[0-3]|mka-cak|private-key|preshared-key|(phase2-)?(private-key|ca-cert|client-cert)-password)$`)
})

// redactKeyfile parses a GLib key file: blank lines, comments ('#'),
// [group] headers and key=value lines (whitespace around '=' allowed);
// anything else is an error, as GLib itself refuses it.
func redactKeyfile(b []byte) ([]byte, []string, error) {
	lines := strings.Split(string(b), "\n")
	var keys []string
	group := ""
	for i, l := range lines {
		t := strings.TrimSpace(strings.TrimSuffix(l, "\r"))
		switch {
		case t == "" || strings.HasPrefix(t, "#"):
			continue
		case strings.HasPrefix(t, "["):
			if !strings.HasSuffix(t, "]") || len(t) < 3 {
				return nil, nil, fmt.Errorf("line %d: a group header without its ']'", i+1)
			}
			group = t[1 : len(t)-1]
			continue
		}
		k, _, ok := strings.Cut(l, "=")
		if !ok {
			return nil, nil, fmt.Errorf("line %d is not a key=value pair, group or comment", i+1)
		}
		if group == "" {
			return nil, nil, fmt.Errorf("line %d: a key before any group", i+1)
		}
		k = strings.TrimSpace(k)
		name, _, _ := strings.Cut(k, "[")
		if group == "vpn-secrets" || keyfileSecret().MatchString(name) {
			lines[i] = k + "=" + Redacted
			keys = append(keys, k)
		}
	}
	return []byte(strings.Join(lines, "\n")), keys, nil
}

// networkdSecret names the secret keys of each systemd.netdev section.
var networkdSecret = map[string]map[string]bool{
	"WireGuard":                 {"PrivateKey": true},
	"WireGuardPeer":             {"PresharedKey": true},
	"MACsecTransmitAssociation": {"Key": true},
	"MACsecReceiveAssociation":  {"Key": true},
}

// redactNetworkd parses a systemd unit-style file: blank lines, comments
// ('#' or ';'), [Section] headers, Key=Value lines, and values continued
// over lines ending in '\'. A continued secret is redacted whole.
func redactNetworkd(b []byte) ([]byte, []string, error) {
	lines := strings.Split(string(b), "\n")
	var keys []string
	section := ""
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSuffix(lines[i], "\r")
		t := strings.TrimSpace(l)
		switch {
		case t == "" || t[0] == '#' || t[0] == ';':
			continue
		case t[0] == '[':
			if !strings.HasSuffix(t, "]") {
				return nil, nil, fmt.Errorf("line %d: a section header without its ']'", i+1)
			}
			section = t[1 : len(t)-1]
			continue
		}
		k, _, ok := strings.Cut(t, "=")
		if !ok {
			return nil, nil, fmt.Errorf("line %d has no '='", i+1)
		}
		k = strings.TrimSpace(k)
		first := i
		for strings.HasSuffix(strings.TrimRight(strings.TrimSuffix(lines[i], "\r"), " \t"), `\`) && i+1 < len(lines) {
			i++ // a continuation line belongs to this value
		}
		if networkdSecret[section][k] {
			lines[first] = k + "=" + Redacted
			for j := first + 1; j <= i; j++ {
				lines[j] = "# " + Redacted
			}
			keys = append(keys, k)
		}
	}
	return []byte(strings.Join(lines, "\n")), keys, nil
}

// ifupdownStanza are the words that start an interfaces(5) stanza.
var ifupdownStanza = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(iface|mapping|auto|allow-[^ \t]+|source|source-directory|rename|no-auto-down|no-scripts)$`)
})

// ifupdownSecret matches the secret options (see redactors).
var ifupdownSecret = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(wpa-psk|wpa-passphrase|wpa-password|wpa-wep-key[0-3]|wpa-private-key2?-passwd|wpa-pin|wireless-key[1-4]?)$`)
})

var errMisplacedOption = errors.New("an option outside any iface or mapping stanza")

// redactIfupdown parses interfaces(5): comments ('#' first on a line),
// lines continued with '\', stanzas, and the option lines of iface and
// mapping stanzas. A continued secret is redacted whole.
func redactIfupdown(b []byte) ([]byte, []string, error) {
	lines := strings.Split(string(b), "\n")
	var keys []string
	inStanza := false
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(strings.TrimSuffix(lines[i], "\r"))
		if t == "" || t[0] == '#' {
			continue
		}
		first := i
		for strings.HasSuffix(strings.TrimSpace(strings.TrimSuffix(lines[i], "\r")), `\`) && i+1 < len(lines) {
			i++
		}
		word, rest, _ := strings.Cut(strings.ReplaceAll(t, "\t", " "), " ")
		if ifupdownStanza().MatchString(word) {
			inStanza = word == "iface" || word == "mapping"
			continue
		}
		if !inStanza {
			return nil, nil, fmt.Errorf("line %d: %w", first+1, errMisplacedOption)
		}
		if ifupdownSecret().MatchString(word) && strings.TrimSpace(rest) != "" {
			indent := lines[first][:len(lines[first])-len(strings.TrimLeft(lines[first], " \t"))]
			lines[first] = indent + word + " " + Redacted
			for j := first + 1; j <= i; j++ {
				lines[j] = "# " + Redacted
			}
			keys = append(keys, word)
		}
	}
	return []byte(strings.Join(lines, "\n")), keys, nil
}

// redactCommented redacts the value of every commented-out line that would
// set a secret key if it were uncommented, keeping the comment marker and
// the key; the keys come back as "# key".
func redactCommented(b []byte, commented func(string) (string, int)) ([]byte, []string) {
	if commented == nil || !bytes.ContainsAny(b, "#;") {
		return b, nil
	}
	lines := strings.Split(string(b), "\n")
	var keys []string
	for i, l := range lines {
		t := strings.TrimLeft(l, " \t")
		if t == "" || t[0] != '#' && t[0] != ';' {
			continue
		}
		body := strings.TrimLeft(t, "#; \t")
		key, at := commented(strings.TrimSuffix(body, "\r"))
		if key == "" {
			continue
		}
		lines[i] = l[:len(l)-len(body)] + body[:at] + Redacted
		keys = append(keys, "# "+key)
	}
	if len(keys) == 0 {
		return b, nil
	}
	return []byte(strings.Join(lines, "\n")), keys
}

// commentedNetplan: "password: …", "- shared: …", or a tunnel's "key: …".
var commentedNetplanLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:-[ \t]*)?"?([A-Za-z-]+)"?[ \t]*:[ \t]*(\S)`) })

func commentedNetplan(l string) (string, int) {
	m := commentedNetplanLine().FindStringSubmatchIndex(l)
	if m == nil {
		return "", 0
	}
	k := l[m[2]:m[3]]
	if !netplanSecret[k] && k != "key" && k != "keys" {
		return "", 0
	}
	return k, m[4]
}

// commentedKeyfile: "psk=…", "password = …", "private-key-password=…".
func commentedKeyfile(l string) (string, int) {
	k, v, ok := strings.Cut(l, "=")
	if !ok {
		return "", 0
	}
	k = strings.TrimSpace(k)
	name, _, _ := strings.Cut(k, "[")
	if !keyfileSecret().MatchString(name) || strings.TrimSpace(v) == "" {
		return "", 0
	}
	return k, len(l) - len(strings.TrimLeft(v, " \t"))
}

// commentedNetworkd: "PrivateKey=…", "PresharedKey=…", "Key=…" in any section.
func commentedNetworkd(l string) (string, int) {
	k, v, ok := strings.Cut(l, "=")
	if !ok {
		return "", 0
	}
	k = strings.TrimSpace(k)
	secret := false
	for _, keys := range networkdSecret {
		secret = secret || keys[k]
	}
	if !secret || strings.TrimSpace(v) == "" {
		return "", 0
	}
	return k, len(l) - len(strings.TrimLeft(v, " \t"))
}

// commentedIfupdown: "wpa-psk …", "wireless-key …".
func commentedIfupdown(l string) (string, int) {
	word, rest, ok := strings.Cut(strings.ReplaceAll(l, "\t", " "), " ")
	if !ok || !ifupdownSecret().MatchString(word) || strings.TrimSpace(rest) == "" {
		return "", 0
	}
	return word, len(l) - len(strings.TrimLeft(rest, " "))
}
