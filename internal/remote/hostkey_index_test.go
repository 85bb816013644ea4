package remote

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// TestKnownDBAnswersAsKnownhosts: the index gives, for every host and key,
// the answer knownhosts gives (accepted or not, and the keys a host is
// known by), over files of plain lines alone, with hashed, wildcard,
// negated and @cert-authority lines among them, and with a revocation.
func TestKnownDBAnswersAsKnownhosts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]ssh.PublicKey, 4)
	for i := range keys {
		seed := make([]byte, ed25519.SeedSize)
		seed[0] = byte(i + 1)
		pub, err := ssh.NewPublicKey(ed25519.NewKeyFromSeed(seed).Public())
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = pub
	}
	hosts := []string{"node-1", "node-2", "node-3", "10.0.0.1", "::1", "spark.lan"}
	ports := []string{"22", "2222"}
	pattern := func(h, p string) string {
		if p == "22" && !strings.Contains(h, ":") {
			return h
		}
		return "[" + h + "]:" + p
	}
	extra := map[string][]string{
		"plain":   nil,
		"general": {"|1|" + "hashed", "node-*", "!node-2,node-?", "@cert-authority *.lan"},
		"revoked": {"@revoked *"},
	}
	for round := 0; round < 50; round++ {
		for name, kinds := range extra {
			t.Run(fmt.Sprintf("%s/%d", name, round), func(t *testing.T) {
				dir := t.TempDir()
				var files []string
				for f := 0; f < 2; f++ {
					var b strings.Builder
					b.WriteString("# comment\n\n")
					for l := 0; l < 12; l++ {
						var pats []string
						for n := 1 + r.IntN(2); n > 0; n-- {
							pats = append(pats, pattern(hosts[r.IntN(len(hosts))], ports[r.IntN(len(ports))]))
						}
						fmt.Fprintf(&b, "  %s\t%s\r\n", strings.Join(pats, ","), strings.TrimSpace(string(ssh.MarshalAuthorizedKey(keys[r.IntN(len(keys))]))))
					}
					for _, k := range kinds {
						key := keys[r.IntN(len(keys))]
						if strings.HasPrefix(k, "|1|") {
							k = knownhosts.HashHostname(pattern(hosts[r.IntN(len(hosts))], "22"))
						}
						fmt.Fprintf(&b, "%s %s", k, ssh.MarshalAuthorizedKey(key))
					}
					p := filepath.Join(dir, fmt.Sprintf("known_hosts%d", f))
					if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
						t.Fatal(err)
					}
					files = append(files, p)
				}
				want, err := knownhosts.New(files...)
				if err != nil {
					t.Fatal(err)
				}
				db, err := newKnownDB(files)
				if err != nil {
					t.Fatal(err)
				}
				if (db.plain == nil) != (name == "revoked") || db.general != (name != "plain") {
					t.Fatalf("index: plain nil %v, general %v", db.plain == nil, db.general)
				}
				remote := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 22}
				for _, h := range hosts {
					for _, p := range ports {
						addr := net.JoinHostPort(h, p)
						for _, k := range keys {
							w, g := want(addr, remote, k), db.check(addr, remote, k)
							if (w == nil) != (g == nil) || w != nil && w.Error() != g.Error() {
								t.Errorf("%s %s: knownhosts %v, index %v", addr, ssh.FingerprintSHA256(k), w, g)
							}
						}
						var ke *knownhosts.KeyError
						var wantKeys []string
						if errors.As(want(addr, remote, probeKey), &ke) {
							for _, k := range ke.Want {
								wantKeys = append(wantKeys, ssh.FingerprintSHA256(k.Key))
							}
						}
						var got []string
						for _, k := range db.known(addr) {
							got = append(got, ssh.FingerprintSHA256(k))
						}
						if strings.Join(got, " ") != strings.Join(wantKeys, " ") {
							t.Errorf("%s: known %v, knownhosts %v", addr, got, wantKeys)
						}
					}
				}
			})
		}
	}
}
