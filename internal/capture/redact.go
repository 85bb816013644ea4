package capture

import (
	"path"
	"regexp"
	"strings"

	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// Redacted replaces every secret value a snapshot would otherwise carry.
const Redacted = "<redacted by sparkrig>"

// secretRule says which files may hold secrets and which keys are secret in
// them. Keys are matched case-insensitively against the whole key name.
type secretRule struct {
	files []string // path.Match patterns
	keys  *regexp.Regexp
	// sections, in INI files, are sections whose every key is secret.
	sections *regexp.Regexp
	why      string
}

// secretRules is the data: one entry per configuration format sparkrig
// captures. A format added to the capture list that can hold a secret gets
// its entry here.
var secretRules = []secretRule{
	{files: []string{"/etc/NetworkManager/system-connections/*"},
		keys:     regexp.MustCompile(`(?i)^(psk|password|[a-z0-9-]*-password|private-key-password|secrets?|wep-key[0-9]|leap-password|pin|private-key|preshared-key|[a-z0-9-]*-psk)$`),
		sections: regexp.MustCompile(`(?i)^vpn-secrets$`),
		why:      "NetworkManager keyfile: Wi-Fi PSK, 802.1x, VPN and WireGuard secrets"},
	{files: []string{"/etc/netplan/*"},
		keys: regexp.MustCompile(`(?i)^(password|psk|key|private|shared|private-key|preshared-key|shared-key|client-key-password|private-key-password)$`),
		why:  "netplan: Wi-Fi passwords, 802.1x auth, WireGuard keys"},
	{files: []string{"/etc/systemd/network/*"},
		keys: regexp.MustCompile(`(?i)^(privatekey|presharedkey|privatekeyfile|presharedkeyfile)$`),
		why:  "systemd-networkd: WireGuard keys"},
	{files: []string{"/etc/network/interfaces", "/etc/network/interfaces.d/*"},
		keys: regexp.MustCompile(`(?i)^(wpa-[a-z0-9-]+|wireless-key[0-9]?|pre-shared-key|private-key)$`),
		why:  "ifupdown: wpa-* settings, WEP keys"},
}

// keyLine splits "key = value", "key: value" and "key value" lines (INI,
// YAML, ifupdown), keeping the indentation and separator.
var keyLine = regexp.MustCompile(`^(\s*-?\s*)([A-Za-z0-9_.-]+)(\s*[=:]\s*|\s+)(.*)$`)

// Redact returns b with the values of secret keys replaced, and the keys it
// replaced, for a file at p. Files no rule covers are returned as they are.
func Redact(p string, b []byte) ([]byte, []string) {
	var rule *secretRule
	for i := range secretRules {
		for _, pat := range secretRules[i].files {
			if ok, _ := path.Match(pat, p); ok {
				rule = &secretRules[i]
			}
		}
	}
	if rule == nil {
		return b, nil
	}
	lines := strings.Split(string(b), "\n")
	var keys []string
	secretSection := false
	for i, l := range lines {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]") {
			secretSection = rule.sections != nil && rule.sections.MatchString(strings.Trim(t, "[]"))
			continue
		}
		m := keyLine.FindStringSubmatch(l)
		if m == nil || strings.TrimSpace(m[4]) == "" || !(secretSection || rule.keys.MatchString(m[2])) {
			continue
		}
		lines[i] = m[1] + m[2] + m[3] + Redacted
		keys = append(keys, m[2])
	}
	if len(keys) == 0 {
		return b, nil
	}
	return []byte(strings.Join(lines, "\n")), keys
}

// addFile stores a captured file with its secrets redacted, and says in the
// manifest which keys were.
func addFile(s *snapshot.Snapshot, p string, b []byte) {
	b, keys := Redact(p, b)
	s.AddFile(p, b)
	if len(keys) > 0 {
		s.Manifest.Items[len(s.Manifest.Items)-1].Redacted = keys
	}
}
