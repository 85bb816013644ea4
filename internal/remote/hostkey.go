package remote

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
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
	db        *knownDB // nil when no file exists yet
	// Accepted is set when a new key was recorded.
	accepted string
}

func newHostKeyChecker(files, global []string, acceptNew, hash bool) (*hostKeyChecker, error) {
	k := &hostKeyChecker{acceptNew: acceptNew, hash: hash}
	if len(files) > 0 {
		k.writeTo = files[0]
	}
	for _, f := range append(append([]string(nil), files...), global...) {
		st, err := os.Stat(f)
		switch {
		case err != nil, f == os.DevNull: // absent, or asked to hold no keys
		case !st.Mode().IsRegular():
			// a FIFO would block the read past every deadline, a device
			// never end
			return nil, fmt.Errorf("read known_hosts: %s: not a regular file", f)
		default:
			k.files = append(k.files, f)
		}
	}
	if len(k.files) > 0 {
		db, err := knownHostsDB(k.files)
		if err != nil {
			return nil, fmt.Errorf("read known_hosts: %w", err)
		}
		k.db = db
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
	db     *knownDB
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

// knownHostsDB is knownhosts.New(files...) with its index, shared while the
// files stay as they were.
func knownHostsDB(files []string) (*knownDB, error) {
	key := strings.Join(files, "\x00")
	stamps := make([]fileStamp, 0, len(files))
	for _, f := range files {
		s, ok := stampOf(f)
		if !ok {
			_, err := knownhosts.New(files...) // its error names the file
			if err == nil {
				err = fmt.Errorf("%s: changed while read", f)
			}
			return nil, err
		}
		stamps = append(stamps, s)
	}
	c := &knownHostsCache
	c.Lock()
	defer c.Unlock()
	if c.db != nil && c.key == key && slices.Equal(c.stamps, stamps) {
		return c.db, nil
	}
	db, err := newKnownDB(files)
	if err != nil {
		return nil, err
	}
	c.key, c.stamps, c.db = key, stamps, db
	return db, nil
}

// knownDB is the known_hosts files as knownhosts reads them, and an index
// of their plain lines (one or more host names or addresses, no wildcard,
// negation, hash or marker) by host and port. knownhosts tries every line
// for every host: over a file that lists ten thousand hosts, a fan-out to
// them all matched 10⁸ patterns. The index answers the same as knownhosts
// where it can tell (a key a plain line holds for the host is accepted,
// unless the files revoke keys; the keys known for a host, when every line
// is plain); every other answer (unknown or changed keys, certificates,
// revocations, hashed or wildcard lines) comes from knownhosts itself.
type knownDB struct {
	cb ssh.HostKeyCallback
	// plain indexes the plain lines by host and port; nil when a file
	// revokes a key (every check then goes through cb).
	plain map[hostPort][]ssh.PublicKey
	// general says a line is not plain: the keys known for a host may
	// then be more than the index holds.
	general bool
}

type hostPort struct{ host, port string }

func newKnownDB(files []string) (*knownDB, error) {
	cb, err := knownhosts.New(files...)
	if err != nil {
		return nil, err
	}
	db := &knownDB{cb: cb, plain: map[hostPort][]ssh.PublicKey{}}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for len(b) > 0 {
			var line []byte
			line, b, _ = bytes.Cut(b, []byte("\n"))
			if !db.indexLine(bytes.Trim(bytes.TrimSuffix(line, []byte("\r")), " \t")) {
				db.plain = nil // a revocation: no fast path at all
				return db, nil
			}
		}
	}
	return db, nil
}

// indexLine adds a plain line to the index and notes any other; false
// means the line revokes a key.
func (db *knownDB) indexLine(line []byte) bool {
	if len(line) == 0 || line[0] == '#' {
		return true
	}
	f := strings.FieldsFunc(string(line), func(r rune) bool { return r == ' ' || r == '\t' }) // as knownhosts splits words
	if strings.HasPrefix(f[0], "@") {
		db.general = true
		return f[0] != "@revoked"
	}
	if len(f) < 3 || strings.HasPrefix(f[0], "|") || strings.ContainsAny(f[0], "*?!") {
		db.general = true
		return true
	}
	blob, err := base64.StdEncoding.DecodeString(f[2])
	if err != nil {
		db.general = true
		return true
	}
	key, err := ssh.ParsePublicKey(blob)
	if err != nil || key.Type() != f[1] {
		db.general = true
		return true
	}
	var seen []hostPort // a line counts once for a host it names twice
	for _, p := range strings.Split(f[0], ",") {
		if p == "" {
			continue
		}
		// as knownhosts reads a host pattern: [host]:port, host:port, or
		// a host on port 22
		h, port, err := net.SplitHostPort(p)
		if err != nil {
			if p[0] == '[' {
				db.general = true
				continue
			}
			h, port = p, "22"
		}
		if k := (hostPort{h, port}); !slices.Contains(seen, k) {
			seen = append(seen, k)
			db.plain[k] = append(db.plain[k], key)
		}
	}
	return true
}

// check is knownhosts' answer for key offered by addr ("host:port").
func (db *knownDB) check(addr string, remote net.Addr, key ssh.PublicKey) error {
	if _, cert := key.(*ssh.Certificate); !cert && db.plain != nil {
		if h, p, err := net.SplitHostPort(addr); err == nil {
			blob := key.Marshal()
			for _, k := range db.plain[hostPort{h, p}] {
				if bytes.Equal(k.Marshal(), blob) {
					return nil
				}
			}
		}
	}
	return db.cb(addr, remote, key)
}

// known are the keys known_hosts holds for addr, in the files' order.
func (db *knownDB) known(addr string) []ssh.PublicKey {
	if db.plain != nil && !db.general {
		if h, p, err := net.SplitHostPort(addr); err == nil {
			return db.plain[hostPort{h, p}]
		}
	}
	var ke *knownhosts.KeyError
	if err := db.cb(addr, fakeAddr(addr), probeKey); !errors.As(err, &ke) {
		return nil
	}
	keys := make([]ssh.PublicKey, len(ke.Want))
	for i, w := range ke.Want {
		keys[i] = w.Key
	}
	return keys
}

// knownAlgorithms returns the key algorithms known_hosts holds for addr, so
// the server is asked for a key type we can verify (as ssh does) instead of
// offering another type and looking "changed".
func (k *hostKeyChecker) knownAlgorithms(addr string) []string {
	if k.db == nil {
		return nil
	}
	var algos []string
	seen := map[string]bool{}
	for _, w := range k.db.known(addr) {
		for _, a := range algorithmsFor(w.Type()) {
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
	if k.db != nil {
		err = k.db.check(addr, remote, key)
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
