// Package loopssh runs many SSH servers inside the calling process, on
// loopback, so that sparkrig's own cost of reaching a thousand nodes can be
// measured apart from the nodes' sshd and shell. Each server answers every
// command through one handler; the harness writes the ssh_config, key and
// known_hosts a client needs to reach them as node-0001, node-0002, ...
package loopssh

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Handler answers one command: which server (0-based, in Hosts' order)
// and what the client sent as the exec request,
// its stdin, and where its stdout goes; it returns the exit status. A write
// error on stdout means the client stopped reading: return then.
type Handler func(host int, cmd string, stdin io.Reader, stdout io.Writer) int

// Servers are running loopback SSH servers.
type Servers struct {
	// Hosts are the names the ssh_config gives the servers, in order.
	Hosts []string
	// SSHConfig, Identity and KnownHosts are the client's files.
	SSHConfig, Identity, KnownHosts string

	config    *ssh.ServerConfig
	handler   Handler
	listeners []net.Listener
	wg        sync.WaitGroup
	conns     sync.Map // host index → *atomic.Int64 of connections accepted
}

// Conns returns how many SSH connections host i has accepted.
func (s *Servers) Conns(i int) int64 {
	if n, ok := s.conns.Load(i); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

// Start starts n servers; files go under dir. Close stops them.
func Start(n int, dir string, h Handler) (*Servers, error) {
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	hostKey, err := ssh.NewSignerFromKey(hostPriv)
	if err != nil {
		return nil, err
	}
	userPub, userPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	authorized, err := ssh.NewPublicKey(userPub)
	if err != nil {
		return nil, err
	}
	s := &Servers{
		SSHConfig:  filepath.Join(dir, "ssh_config"),
		Identity:   filepath.Join(dir, "id_ed25519"),
		KnownHosts: filepath.Join(dir, "known_hosts"),
		handler:    h,
	}
	s.config = &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
			if string(k.Marshal()) == string(authorized.Marshal()) {
				return nil, nil
			}
			return nil, fmt.Errorf("unknown key")
		},
	}
	s.config.AddHostKey(hostKey)
	block, err := ssh.MarshalPrivateKey(userPriv, "")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(s.Identity, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, err
	}
	var conf, known strings.Builder
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			s.Close()
			return nil, err
		}
		s.listeners = append(s.listeners, l)
		port := l.Addr().(*net.TCPAddr).Port
		name := fmt.Sprintf("node-%04d", i+1)
		s.Hosts = append(s.Hosts, name)
		fmt.Fprintf(&conf, "Host %s\n  HostName 127.0.0.1\n  Port %d\n  User root\n  IdentityFile %s\n  UserKnownHostsFile %s\n\n",
			name, port, s.Identity, s.KnownHosts)
		known.WriteString(knownhosts.Line([]string{knownhosts.Normalize(l.Addr().String())}, hostKey.PublicKey()) + "\n")
		s.wg.Add(1)
		go s.serve(i, l)
	}
	if err := os.WriteFile(s.SSHConfig, []byte(conf.String()), 0o600); err != nil {
		s.Close()
		return nil, err
	}
	if err := os.WriteFile(s.KnownHosts, []byte(known.String()), 0o600); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close stops accepting connections; open ones end when their client goes.
func (s *Servers) Close() {
	for _, l := range s.listeners {
		l.Close()
	}
	s.wg.Wait()
}

func (s *Servers) serve(host int, l net.Listener) {
	defer s.wg.Done()
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go s.conn(host, c)
	}
}

func (s *Servers) conn(host int, c net.Conn) {
	sc, chans, reqs, err := ssh.NewServerConn(c, s.config)
	if err != nil {
		c.Close()
		return
	}
	defer sc.Close()
	n, _ := s.conns.LoadOrStore(host, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			nc.Reject(ssh.UnknownChannelType, "sessions only")
			continue
		}
		ch, reqs, err := nc.Accept()
		if err != nil {
			continue
		}
		go s.session(host, ch, reqs)
	}
}

func (s *Servers) session(host int, ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	for req := range reqs {
		if req.Type != "exec" {
			req.Reply(req.Type == "env" || req.Type == "signal", nil)
			continue
		}
		var p struct{ Command string }
		if err := ssh.Unmarshal(req.Payload, &p); err != nil {
			req.Reply(false, nil)
			return
		}
		req.Reply(true, nil)
		go ssh.DiscardRequests(reqs)
		code := s.handler(host, p.Command, ch, ch)
		ch.CloseWrite()
		ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(code)}))
		return
	}
}
