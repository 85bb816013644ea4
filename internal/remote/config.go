package remote

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kevinburke/ssh_config"
	"github.com/sparkrig/sparkrig/internal/capped"
)

// Endpoint is a host as OpenSSH would reach it after reading the user's and
// the system's ssh_config.
type Endpoint struct {
	// Name is the host as the user wrote it (the ssh_config alias).
	Name     string
	HostName string
	Port     int
	User     string
	// IdentityFiles are the keys to offer, in order (~ expanded).
	IdentityFiles  []string
	IdentitiesOnly bool
	// KnownHosts are the known_hosts files to check (UserKnownHostsFile);
	// a new key is recorded in the first.
	KnownHosts []string
	// GlobalKnownHosts are read too, never written (GlobalKnownHostsFile,
	// /etc/ssh/ssh_known_hosts and ssh_known_hosts2 by default, as OpenSSH).
	GlobalKnownHosts []string
	// HostKeyAlias, when set, is the name looked up in known_hosts.
	HostKeyAlias string
	// ProxyJump lists jump hosts in order ("" or "none": direct).
	ProxyJump []string
	// StrictHostKeyChecking is the config's value ("yes", "accept-new", ...).
	StrictHostKeyChecking string
	HashKnownHosts        bool
	ConnectTimeout        time.Duration
	// ServerAliveInterval is how often a connection asks the server for a
	// sign of life (0: not set, sparkrig's default; negative: never, as
	// ssh_config's 0); ServerAliveCountMax how many unanswered asks drop
	// it, as OpenSSH's options of those names.
	ServerAliveInterval time.Duration
	ServerAliveCountMax int
}

// Addr is host:port for dialing.
func (e Endpoint) Addr() string {
	return joinHostPort(e.HostName, e.Port)
}

func joinHostPort(h string, port int) string {
	if strings.Contains(h, ":") {
		return "[" + h + "]:" + strconv.Itoa(port)
	}
	return h + ":" + strconv.Itoa(port)
}

// SSHConfig is the parsed user and system OpenSSH client configuration.
type SSHConfig struct {
	// Warnings name what was read but is not applied (Match blocks with
	// criteria other than host and all).
	Warnings []string

	files []*ssh_config.Config
	home  string
	user  string // local user name, the default remote user
	// routes are the unevaluated Match blocks that change where a
	// connection goes: a host they may apply to is refused, not reached
	// another way than ssh would.
	routes []unevaluatedRoute

	indexOnce sync.Once
	index     []hostIndex // one per file
}

// hostIndex narrows a file's Host blocks to those that can match an alias:
// a block whose patterns are all plain names is found by name, every other
// block (wildcards, negations, the implicit "Host *") is always tried. A
// config listing ten thousand hosts is then read in time linear in them,
// not in their square.
type hostIndex struct {
	byName  map[string][]int
	general []int
}

func indexHosts(cfg *ssh_config.Config) hostIndex {
	ix := hostIndex{byName: map[string][]int{}}
	for i, h := range cfg.Hosts {
		plain := len(h.Patterns) > 0
		for _, p := range h.Patterns {
			if strings.ContainsAny(p.String(), "*?!") {
				plain = false
			}
		}
		if !plain {
			ix.general = append(ix.general, i)
			continue
		}
		for _, p := range h.Patterns {
			if l := ix.byName[p.String()]; len(l) == 0 || l[len(l)-1] != i {
				ix.byName[p.String()] = append(l, i)
			}
		}
	}
	return ix
}

// narrowed is each file with only the Host blocks that can match alias, in
// their order in the file: what Get and GetAll of the whole file would find.
func (c *SSHConfig) narrowed(alias string) []*ssh_config.Config {
	c.indexOnce.Do(func() {
		for _, f := range c.files {
			c.index = append(c.index, indexHosts(f))
		}
	})
	out := make([]*ssh_config.Config, len(c.files))
	for i, f := range c.files {
		ix := c.index[i]
		named := ix.byName[alias]
		hosts := make([]*ssh_config.Host, 0, len(named)+len(ix.general))
		a, b := 0, 0
		for a < len(named) || b < len(ix.general) {
			if b == len(ix.general) || a < len(named) && named[a] < ix.general[b] {
				hosts = append(hosts, f.Hosts[named[a]])
				a++
			} else {
				hosts = append(hosts, f.Hosts[ix.general[b]])
				b++
			}
		}
		out[i] = &ssh_config.Config{Hosts: hosts}
	}
	return out
}

// unevaluatedRoute is a Match block sparkrig cannot evaluate that sets a
// route keyword (ProxyJump, ProxyCommand, HostName, Port).
type unevaluatedRoute struct {
	where string   // "FILE line N \"Match ...\""
	keys  []string // the route keywords it sets
	// hosts are the block's host or originalhost patterns, when it has
	// them: a host that matches none cannot be routed by it.
	hosts *ssh_config.Host
}

// LoadSSHConfig reads the OpenSSH client configuration. userFile "" means
// ~/.ssh/config followed by the system file /etc/ssh/ssh_config, as ssh reads
// them; a missing default file is not an error. A named userFile replaces
// both, like ssh -F, and must exist.
func LoadSSHConfig(userFile, home, localUser string) (*SSHConfig, error) {
	c := &SSHConfig{home: home, user: localUser}
	explicit := userFile != ""
	if !explicit {
		userFile = filepath.Join(home, ".ssh", "config")
	}
	files := []string{userFile, "/etc/ssh/ssh_config"}
	if explicit {
		files = files[:1] // like ssh -F: the system file is not read
	}
	for i, p := range files {
		b, err := capped.ReadFile(p, maxConfigBytes)
		if err != nil {
			if i == 0 && explicit {
				return nil, fmt.Errorf("read ssh config: %w", err)
			}
			continue
		}
		if err := checkIncludes(b, p == "/etc/ssh/ssh_config", home, 0); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		b, skipped := skipUnsupportedMatch(b)
		for _, m := range skipped {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s: %s is not evaluated; its settings are not applied", p, m.where))
			if len(m.keys) > 0 {
				m.where = p + " " + m.where
				c.routes = append(c.routes, m)
			}
		}
		cfg, err := ParseSSHConfig(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		c.files = append(c.files, cfg)
	}
	return c, nil
}

// maxConfigBytes bounds an ssh_config file and every file it includes.
const maxConfigBytes = 4 << 20

// checkIncludes refuses an Include that names anything but regular files
// of at most maxConfigBytes (the parser reads included files itself, whole:
// /dev/zero would exhaust memory, a FIFO hang), following includes as
// ssh does (at most 16 deep). Paths resolve as the parser resolves them.
func checkIncludes(b []byte, system bool, home string, depth int) error {
	if depth > 16 {
		return fmt.Errorf("ssh_config includes nested more than 16 deep")
	}
	for i, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(strings.ReplaceAll(l, "=", " "))
		if len(f) < 2 || !strings.EqualFold(f[0], "Include") {
			continue
		}
		for _, d := range f[1:] {
			p := d
			switch {
			case filepath.IsAbs(d):
			case system:
				p = filepath.Join("/etc/ssh", d)
			case strings.HasPrefix(d, "~/"):
				p = filepath.Join(home, d[2:])
			default:
				p = filepath.Join(home, ".ssh", d)
			}
			matches, err := filepath.Glob(p)
			if err != nil {
				return fmt.Errorf("line %d: Include %s: %v", i+1, d, err)
			}
			for _, m := range matches {
				inc, err := capped.ReadFile(m, maxConfigBytes)
				if err != nil {
					return fmt.Errorf("line %d: Include %s: %v", i+1, d, err)
				}
				if err := checkIncludes(inc, system, home, depth+1); err != nil {
					return fmt.Errorf("%s: %w", m, err)
				}
			}
		}
	}
	return nil
}

// skipUnsupportedMatch turns each Match block the parser cannot evaluate
// (criteria other than a lone "all" or "host PATTERNS": user, exec,
// localnetwork, ...) into a block that matches no host, and names them
// with the route keywords each sets.
func skipUnsupportedMatch(b []byte) ([]byte, []unevaluatedRoute) {
	lines := strings.Split(string(b), "\n")
	var skipped []unevaluatedRoute
	var cur *unevaluatedRoute // the skipped block being read
	for i, l := range lines {
		f := strings.Fields(strings.ReplaceAll(l, "=", " "))
		if len(f) == 0 {
			continue
		}
		if strings.EqualFold(f[0], "Host") || strings.EqualFold(f[0], "Match") {
			cur = nil
		}
		if cur != nil && routeKeyword[strings.ToLower(f[0])] {
			cur.keys = append(cur.keys, f[0])
		}
		if len(f) < 2 || !strings.EqualFold(f[0], "Match") {
			continue
		}
		crit := strings.ToLower(f[1])
		if crit == "all" && len(f) == 2 || crit == "host" && len(f) > 2 && !hasMatchCriterion(f[2:]) {
			continue
		}
		skipped = append(skipped, unevaluatedRoute{where: fmt.Sprintf("line %d %q", i+1, strings.Join(f, " ")), hosts: matchHosts(l)})
		cur = &skipped[len(skipped)-1]
		lines[i] = "Host sparkrig-match-not-evaluated.invalid"
	}
	return []byte(strings.Join(lines, "\n")), skipped
}

// routeKeyword are the ssh_config keywords that change where a connection
// goes.
var routeKeyword = map[string]bool{"proxyjump": true, "proxycommand": true, "hostname": true, "port": true}

// matchHosts returns the host and originalhost patterns of a Match line
// ("Match host spark-* exec ..."), or nil when it has none (it may then
// apply to any host).
func matchHosts(line string) *ssh_config.Host {
	words := matchWords(line)
	var pats []*ssh_config.Pattern
	for i := 1; i < len(words); i++ {
		switch strings.ToLower(words[i]) {
		case "all", "canonical", "final":
			continue
		case "host", "originalhost":
			if i+1 < len(words) {
				for _, p := range strings.Split(words[i+1], ",") {
					if pat, err := ssh_config.NewPattern(p); err == nil {
						pats = append(pats, pat)
					}
				}
			}
		}
		i++ // the criterion's argument
	}
	if len(pats) == 0 {
		return nil
	}
	return &ssh_config.Host{Patterns: pats}
}

// matchWords splits a Match line into words, a double-quoted argument
// (exec "test -f x") as one.
func matchWords(line string) []string {
	var out []string
	var w strings.Builder
	quoted, inWord := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case !quoted && (r == ' ' || r == '\t' || r == '='):
			if inWord {
				out = append(out, w.String())
				w.Reset()
			}
			inWord = false
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, w.String())
	}
	return out
}

func hasMatchCriterion(words []string) bool {
	for _, w := range words {
		switch strings.ToLower(w) {
		case "all", "canonical", "final", "exec", "localnetwork", "host", "originalhost", "tagged",
			"command", "user", "localuser", "version", "sessiontype", "address", "localaddress", "localport", "rdomain":
			return true
		}
	}
	return false
}

// ParseSSHConfig parses ssh_config text. The underlying parser panics on some
// malformed input; that is turned into an error.
func ParseSSHConfig(b []byte) (cfg *ssh_config.Config, err error) {
	defer func() {
		if r := recover(); r != nil {
			cfg, err = nil, fmt.Errorf("cannot parse: %v", r)
		}
	}()
	return ssh_config.Decode(bytes.NewReader(b))
}

// NewSSHConfig builds a configuration from already parsed files, first wins
// (for tests and callers that hold the text).
func NewSSHConfig(home, localUser string, files ...*ssh_config.Config) *SSHConfig {
	return &SSHConfig{files: files, home: home, user: localUser}
}

func (c *SSHConfig) get(alias, key string) string {
	for _, f := range c.narrowed(alias) {
		if v, err := f.Get(alias, key); err == nil && v != "" {
			return v
		}
	}
	return ""
}

func (c *SSHConfig) getAll(alias, key string) []string {
	var out []string
	for _, f := range c.narrowed(alias) {
		if v, err := f.GetAll(alias, key); err == nil {
			out = append(out, v...)
		}
	}
	return out
}

// Resolve applies the configuration to a host spec "[user@]host[:port]", like
// ssh does: values on the command line (user, port in the spec) win over the
// config, and the first matching value in the config wins.
func (c *SSHConfig) Resolve(spec string) (Endpoint, error) {
	user, alias, port, err := splitSpec(spec)
	if err != nil {
		return Endpoint{}, err
	}
	e := Endpoint{Name: alias, HostName: alias, Port: 22, User: c.user}
	if v := c.get(alias, "HostName"); v != "" {
		e.HostName = strings.ReplaceAll(v, "%h", alias)
	}
	for _, r := range c.routes {
		if r.hosts == nil || r.hosts.Matches(alias) || r.hosts.Matches(e.HostName) {
			// ssh would evaluate the block, and may then go another way
			// (through a bastion, to another address): never guess.
			return e, fmt.Errorf("ssh config: %s sets %s and may apply to %s, but sparkrig cannot evaluate it: "+
				"ssh may route %s differently (ssh -G %s shows how); write the route in a Host block, or give --ssh-config a file without this Match",
				r.where, strings.Join(r.keys, ", "), alias, alias, alias)
		}
	}
	if v := c.get(alias, "Port"); v != "" {
		if e.Port, err = parsePort(v); err != nil {
			return e, fmt.Errorf("ssh config for %s: Port %q: %w", alias, v, err)
		}
	}
	if port != 0 {
		e.Port = port
	}
	if v := c.get(alias, "User"); v != "" {
		e.User = v
	}
	if user != "" {
		e.User = user
	}
	for _, f := range c.getAll(alias, "IdentityFile") {
		e.IdentityFiles = append(e.IdentityFiles, c.expand(f, e))
	}
	e.IdentitiesOnly = strings.EqualFold(c.get(alias, "IdentitiesOnly"), "yes")
	if vs := c.getAll(alias, "UserKnownHostsFile"); len(vs) > 0 { // the first line wins, like ssh
		for _, f := range strings.Fields(vs[0]) {
			e.KnownHosts = append(e.KnownHosts, c.expand(f, e))
		}
	}
	if vs := c.getAll(alias, "GlobalKnownHostsFile"); len(vs) > 0 {
		for _, f := range strings.Fields(vs[0]) {
			e.GlobalKnownHosts = append(e.GlobalKnownHosts, c.expand(f, e))
		}
	} else {
		e.GlobalKnownHosts = []string{"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"}
	}
	if len(e.KnownHosts) == 0 {
		e.KnownHosts = []string{filepath.Join(c.home, ".ssh", "known_hosts")}
	}
	if v := c.get(alias, "ProxyCommand"); v != "" && !strings.EqualFold(v, "none") {
		// Connecting directly instead would reach another network path, or
		// the wrong host, without a word.
		return e, fmt.Errorf("ssh config for %s: ProxyCommand is not supported; use ProxyJump (ssh -J) for %s, or run sparkrig where %s is reachable directly", alias, alias, alias)
	}
	e.HostKeyAlias = c.get(alias, "HostKeyAlias")
	if v := c.get(alias, "ProxyJump"); v != "" && !strings.EqualFold(v, "none") {
		for _, j := range strings.Split(v, ",") {
			if j = strings.TrimSpace(j); j != "" {
				e.ProxyJump = append(e.ProxyJump, j)
			}
		}
	}
	e.StrictHostKeyChecking = strings.ToLower(c.get(alias, "StrictHostKeyChecking"))
	e.HashKnownHosts = strings.EqualFold(c.get(alias, "HashKnownHosts"), "yes")
	if v := c.get(alias, "ConnectTimeout"); v != "" {
		if s, err := strconv.Atoi(v); err == nil && s > 0 {
			e.ConnectTimeout = time.Duration(s) * time.Second
		}
	}
	if v := c.get(alias, "ServerAliveInterval"); v != "" {
		if s, err := strconv.Atoi(v); err == nil && s > 0 {
			e.ServerAliveInterval = time.Duration(s) * time.Second
		} else if err == nil && s == 0 {
			e.ServerAliveInterval = -1 // set to 0: no keepalive
		}
	}
	if v := c.get(alias, "ServerAliveCountMax"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			e.ServerAliveCountMax = n
		}
	}
	return e, nil
}

// expand replaces ~ and the common % tokens of ssh_config paths.
func (c *SSHConfig) expand(p string, e Endpoint) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		p = filepath.Join(c.home, p[1:])
	}
	r := strings.NewReplacer("%d", c.home, "%u", c.user, "%r", e.User, "%h", e.HostName, "%n", e.Name, "%p", strconv.Itoa(e.Port), "%%", "%")
	return r.Replace(p)
}

// splitSpec splits "[user@]host[:port]"; an IPv6 host with a port is written
// "[addr]:port".
func splitSpec(spec string) (user, host string, port int, err error) {
	if i := strings.LastIndexByte(spec, '@'); i >= 0 {
		user, spec = spec[:i], spec[i+1:]
	}
	host = spec
	switch {
	case strings.HasPrefix(spec, "["):
		end := strings.IndexByte(spec, ']')
		if end < 0 {
			return "", "", 0, fmt.Errorf("host %q: missing ]", spec)
		}
		host = spec[1:end]
		if rest := spec[end+1:]; rest != "" {
			if !strings.HasPrefix(rest, ":") {
				return "", "", 0, fmt.Errorf("host %q: junk after ]", spec)
			}
			if port, err = parsePort(rest[1:]); err != nil {
				return "", "", 0, fmt.Errorf("host %q: %w", spec, err)
			}
		}
	case strings.Count(spec, ":") == 1:
		i := strings.IndexByte(spec, ':')
		host = spec[:i]
		if port, err = parsePort(spec[i+1:]); err != nil {
			return "", "", 0, fmt.Errorf("host %q: %w", spec, err)
		}
	}
	if host == "" {
		return "", "", 0, fmt.Errorf("empty host name in %q", spec)
	}
	return user, host, port, nil
}

func parsePort(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("bad port %q", s)
	}
	return p, nil
}
