package remote

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"

	"github.com/sparkrig/sparkrig/internal/capped"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// defaultIdentities are the keys ssh tries when the config names none.
var defaultIdentities = []string{".ssh/id_ed25519", ".ssh/id_ecdsa", ".ssh/id_rsa"}

// signers collects the keys to offer: the agent's (unless IdentitiesOnly
// restricts them to the configured files) and the unencrypted identity files.
// The returned closer releases the agent connection.
func signers(e Endpoint, agentSock, home string) ([]ssh.Signer, func(), []string) {
	var out []ssh.Signer
	var notes []string
	closer := func() {}
	files := e.IdentityFiles
	if len(files) == 0 {
		for _, f := range defaultIdentities {
			files = append(files, filepath.Join(home, f))
		}
	}
	var filePubs [][]byte
	var fileSigners []ssh.Signer
	for _, f := range files {
		s, pub, note := loadIdentity(f, len(e.IdentityFiles) > 0)
		if note != "" {
			notes = append(notes, note)
		}
		if pub != nil {
			filePubs = append(filePubs, pub.Marshal())
		}
		if s != nil {
			fileSigners = append(fileSigners, s)
		}
	}
	if agentSock != "" {
		if c, err := net.Dial("unix", agentSock); err == nil {
			closer = func() { c.Close() }
			if as, err := agent.NewClient(c).Signers(); err == nil {
				for _, s := range as {
					if !e.IdentitiesOnly || containsKey(filePubs, s.PublicKey().Marshal()) {
						out = append(out, s)
					}
				}
			}
		} else {
			notes = append(notes, fmt.Sprintf("ssh-agent at SSH_AUTH_SOCK=%s: %v", agentSock, err))
		}
	}
	return append(out, fileSigners...), closer, notes
}

// identityCache holds the identity files read, by path, while each is
// unchanged: a fan-out to thousands of hosts reads and parses its keys
// once, not once per connection.
var identityCache struct {
	sync.Mutex
	m map[string]identity
}

type identity struct {
	stamp  fileStamp
	signer ssh.Signer
	pub    ssh.PublicKey
	note   string
}

// loadIdentity is readIdentity, remembered while the file is unchanged.
func loadIdentity(path string, named bool) (ssh.Signer, ssh.PublicKey, string) {
	st, ok := stampOf(path)
	if !ok {
		return readIdentity(path, named)
	}
	c := &identityCache
	c.Lock()
	id, hit := c.m[path]
	c.Unlock()
	if hit && id.stamp == st {
		return id.signer, id.pub, id.note
	}
	s, pub, note := readIdentity(path, named)
	if after, ok := stampOf(path); ok && after == st {
		c.Lock()
		if c.m == nil || len(c.m) >= 64 {
			c.m = map[string]identity{}
		}
		c.m[path] = identity{st, s, pub, note}
		c.Unlock()
	}
	return s, pub, note
}

// readIdentity reads a private key file. An encrypted key yields only its
// public half (from file.pub) so a matching agent key can still be used.
func readIdentity(path string, named bool) (ssh.Signer, ssh.PublicKey, string) {
	b, err := capped.ReadFile(path, 1<<20)
	if err != nil {
		if named || !errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Sprintf("identity %s: %v", path, err)
		}
		return nil, nil, ""
	}
	s, err := ssh.ParsePrivateKey(b)
	if err == nil {
		return s, s.PublicKey(), ""
	}
	var pm *ssh.PassphraseMissingError
	if errors.As(err, &pm) {
		pub := pm.PublicKey
		if pub == nil {
			if pb, err := os.ReadFile(path + ".pub"); err == nil {
				pub, _, _, _, _ = ssh.ParseAuthorizedKey(pb)
			}
		}
		return nil, pub, fmt.Sprintf("identity %s is passphrase-protected: add it to ssh-agent (ssh-add %s)", path, path)
	}
	return nil, nil, fmt.Sprintf("identity %s: %v", path, err)
}

func containsKey(list [][]byte, k []byte) bool {
	for _, l := range list {
		if bytes.Equal(l, k) {
			return true
		}
	}
	return false
}
