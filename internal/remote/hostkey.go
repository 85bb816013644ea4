package remote

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/sparkrig/sparkrig/internal/shell"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// appendMu serialises appends to known_hosts when many hosts are dialed at
// once with AcceptNewHostKeys.
var appendMu sync.Mutex

// hostKeyChecker checks a server's key against known_hosts files. There is
// deliberately no way to turn checking off: an unknown key is either refused
// or, with acceptNew, recorded (OpenSSH StrictHostKeyChecking=accept-new); a
// changed key is always refused.
type hostKeyChecker struct {
	files     []string // existing known_hosts files
	writeTo   string   // where accept-new appends
	acceptNew bool
	hash      bool
	cb        ssh.HostKeyCallback // nil when no file exists yet
	// Accepted is set when a new key was recorded.
	accepted string
}

func newHostKeyChecker(files, global []string, acceptNew, hash bool) (*hostKeyChecker, error) {
	k := &hostKeyChecker{acceptNew: acceptNew, hash: hash}
	if len(files) > 0 {
		k.writeTo = files[0]
	}
	for _, f := range append(append([]string(nil), files...), global...) {
		if _, err := os.Stat(f); err == nil {
			k.files = append(k.files, f)
		}
	}
	if len(k.files) > 0 {
		cb, err := knownHostsDB(k.files)
		if err != nil {
			return nil, fmt.Errorf("read known_hosts: %w", err)
		}
		k.cb = cb
	}
	return k, nil
}

// knownHostsCache holds the parsed known_hosts files, read once for every
// connection that names the same files while they are unchanged: read per
// connection, a fan-out over n hosts whose known_hosts lists them all
// parsed n² lines and held n copies of the file's keys while connected.
var knownHostsCache struct {
	sync.Mutex
	key    string
	stamps []fileStamp
	cb     ssh.HostKeyCallback
}

// fileStamp tells a file changed (accept-new appends, ssh-keygen -R rewrites).
type fileStamp struct {
	size, mtime int64
	ino         uint64
}

func stampOf(f string) (fileStamp, bool) {
	st, err := os.Stat(f)
	if err != nil {
		return fileStamp{}, false
	}
	s := fileStamp{size: st.Size(), mtime: st.ModTime().UnixNano()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		s.ino = sys.Ino
	}
	return s, true
}

// knownHostsDB is knownhosts.New(files...), shared while the files stay as
// they were.
func knownHostsDB(files []string) (ssh.HostKeyCallback, error) {
	key := strings.Join(files, "\x00")
	stamps := make([]fileStamp, 0, len(files))
	for _, f := range files {
		s, ok := stampOf(f)
		if !ok {
			return knownhosts.New(files...) // its error names the file
		}
		stamps = append(stamps, s)
	}
	c := &knownHostsCache
	c.Lock()
	defer c.Unlock()
	if c.cb != nil && c.key == key && slices.Equal(c.stamps, stamps) {
		return c.cb, nil
	}
	cb, err := knownhosts.New(files...)
	if err != nil {
		return nil, err
	}
	c.key, c.stamps, c.cb = key, stamps, cb
	return cb, nil
}

// knownAlgorithms returns the key algorithms known_hosts holds for addr, so
// the server is asked for a key type we can verify (as ssh does) instead of
// offering another type and looking "changed".
func (k *hostKeyChecker) knownAlgorithms(addr string) []string {
	if k.cb == nil {
		return nil
	}
	var ke *knownhosts.KeyError
	if err := k.cb(addr, fakeAddr(addr), probeKey); !errors.As(err, &ke) {
		return nil
	}
	var algos []string
	seen := map[string]bool{}
	for _, w := range ke.Want {
		for _, a := range algorithmsFor(w.Key.Type()) {
			if !seen[a] {
				seen[a] = true
				algos = append(algos, a)
			}
		}
	}
	return algos
}

func algorithmsFor(keyType string) []string {
	if keyType == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	return []string{keyType}
}

// probeKey is a fixed key nobody holds, used only to list known keys.
var probeKey = func() ssh.PublicKey {
	k, _ := ssh.NewPublicKey(ed25519.PublicKey(make([]byte, ed25519.PublicKeySize)))
	return k
}()

func fakeAddr(string) net.Addr { return &net.TCPAddr{IP: net.IPv4zero} }

// check verifies key for addr ("host:port", or the HostKeyAlias with the port).
func (k *hostKeyChecker) check(addr string, remote net.Addr, key ssh.PublicKey) error {
	fp := ssh.FingerprintSHA256(key)
	name := knownhosts.Normalize(addr)
	var err error = &knownhosts.KeyError{}
	if k.cb != nil {
		err = k.cb(addr, remote, key)
	}
	if err == nil {
		return nil
	}
	var ke *knownhosts.KeyError
	var re *knownhosts.RevokedError
	switch {
	case errors.As(err, &re):
		return fmt.Errorf("%w: %s offered a revoked %s key %s", ErrHostKey, name, key.Type(), fp)
	case errors.As(err, &ke) && len(ke.Want) > 0:
		w := ke.Want[0]
		return fmt.Errorf("%w: the host key of %s has CHANGED: it offered %s %s, but %s:%d holds %s; refusing to connect (if the host was reinstalled, remove the old key with: ssh-keygen -R %s -f %s)",
			ErrHostKey, name, key.Type(), fp, w.Filename, w.Line, ssh.FingerprintSHA256(w.Key), shell.QuoteIfNeeded(name), shell.QuoteIfNeeded(w.Filename))
	case errors.As(err, &ke):
		if !k.acceptNew {
			return fmt.Errorf("%w: the host key of %s is unknown: %s %s is in no known_hosts file (%s); check the fingerprint, then run again with --accept-new-host-keys or add it with ssh-keyscan",
				ErrHostKey, name, key.Type(), fp, strings.Join(k.searched(), ", "))
		}
		return k.record(name, key)
	}
	return fmt.Errorf("%w: %s: %v", ErrHostKey, name, err)
}

func (k *hostKeyChecker) searched() []string {
	if k.writeTo == "" {
		return []string{"none configured"}
	}
	return append([]string(nil), k.files...)
}

// record appends the new key to the first known_hosts file, creating it (and
// ~/.ssh) when needed, as OpenSSH's accept-new does.
func (k *hostKeyChecker) record(name string, key ssh.PublicKey) error {
	if k.writeTo == "" {
		return fmt.Errorf("%w: %s: no known_hosts file to record the new key in", ErrHostKey, name)
	}
	host := name
	if k.hash {
		host = knownhosts.HashHostname(name)
	}
	appendMu.Lock()
	defer appendMu.Unlock()
	if err := os.MkdirAll(filepath.Dir(k.writeTo), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(k.writeTo, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("record host key of %s: %w", name, err)
	}
	defer f.Close()
	if _, err := fmt.Fprintln(f, knownhosts.Line([]string{host}, key)); err != nil {
		return fmt.Errorf("record host key of %s: %w", name, err)
	}
	k.accepted = fmt.Sprintf("added %s key %s for %s to %s", key.Type(), ssh.FingerprintSHA256(key), name, k.writeTo)
	return nil
}
