package triage

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sparkrig/sparkrig/internal/capture"
	"github.com/sparkrig/sparkrig/internal/results"
	"github.com/sparkrig/sparkrig/internal/shell"
)

// marker opens each section of the script's output.
const marker = "@@sparkrig-triage"

// ScriptOptions are what one sample asks of a node.
type ScriptOptions struct {
	RASPort  int    // 0: RASPort
	Log      string // a job log to tail on the node ("" for none)
	LogLines int    // 0: 40
	// RASDeadline bounds each RAS query (0: RASDeadline(0)); the GPUs
	// are sampled before RAS is asked, so a RAS port that never answers
	// costs at most this and loses nothing else.
	RASDeadline time.Duration
}

// Script is the POSIX sh a node runs for one sample. It reads /proc (the
// processes that map a libnccl, their command lines, the first ELFPrefix
// bytes of each library and its version string), asks NCCL's RAS service
// for the job's state (ncclras when installed, else the documented
// protocol spoken through bash's /dev/tcp), samples the GPUs with
// nvidia-smi and tails the log. It only reads: no process is signalled,
// traced or attached to.
func Script(o ScriptOptions) string {
	port := o.RASPort
	if port == 0 {
		port = RASPort
	}
	lines := o.LogLines
	if lines <= 0 {
		lines = 40
	}
	var b strings.Builder
	deadline := o.RASDeadline
	if deadline <= 0 {
		deadline = RASDeadline(0)
	}
	secs := max(1, int(deadline/time.Second))
	fmt.Fprintf(&b, "m=%s; p=%d; T=%d; to=%d\n", marker, port, secs, RASCollectiveTimeout(deadline))
	b.WriteString(`exec 2>/dev/null
t() { if command -v timeout >/dev/null; then timeout "$@"; else shift; "$@"; fi; }
echo "$m host"; hostname
echo "$m addrs"; ip -o -4 addr show | awk '{print $4}'
echo "$m procs"
all=
for f in $(grep -l -E '/libnccl[^/]*[.]so' /proc/[0-9]*/maps); do
  d=${f%/maps}
  libs=$(grep -E '/libnccl[^/]*[.]so' "$f" | awk '{print $6}' | sort -u)
  [ -n "$libs" ] || continue
  echo "pid ${d#/proc/}"
  echo "cmd $(tr '\000' ' ' <"$d/cmdline" | cut -c1-300)"
  echo "state $(sed 's/.*) //' "$d/stat" | cut -c1)"
  echo "env $(tr '\000' '\n' <"$d/environ" | grep -E '^(RANK|OMPI_COMM_WORLD_RANK|PMI_RANK|PMIX_RANK|SLURM_PROCID)=[0-9]+$' | head -n 1)"
  printf '%s\n' "$libs" | sed 's/^/lib /'
  all="$all
$libs"
done
printf '%s\n' "$all" | sort -u | while IFS= read -r l; do
  [ -n "$l" ] || continue
  echo "$m elf $l"; head -c ` + strconv.Itoa(capture.ELFPrefix) + ` "$l" | od -An -v -tx1
  echo "$m version $l"; grep -a -o -m1 -E 'NCCL version [0-9]+[.][0-9]+[.][0-9]+[^ [:cntrl:]]*' "$l" | head -n 1
done
echo "$m gpus"; t 20 ` + GPUQuery + `
echo "$m apps"; t 20 ` + AppsQuery + `
if command -v ncclras >/dev/null; then
  echo "$m ras ncclras json"; t $((T+2)) ncclras -p "$p" -t "$to" -f json -v 2>&1; e=$?; echo "$m ras-exit $e"
  if [ "$e" -ne 124 ]; then echo "$m ras ncclras text"; t $((T+2)) ncclras -p "$p" -t "$to" -v 2>&1; echo "$m ras-exit $?"; fi
elif command -v bash >/dev/null; then
  q() { t $((T+2)) bash -c '
T=$1; to=$2
exec 3<>/dev/tcp/127.0.0.1/$3 || exit 7
rl() { l=; IFS= read -r -t "$1" l <&3; c=$?; l=${l%$(printf "\r")}; return $c; }
printf "CLIENT PROTOCOL 2\n" >&3
rl "$T"; c=$?
if [ $c -gt 128 ]; then [ -z "$l" ] || exit 8; exit 10; fi
if [ $c -ne 0 ] && [ -z "$l" ]; then exit 11; fi
case $l in "SERVER PROTOCOL "[0-9]*) ;; *) printf "%s\n" "$l" | cut -c1-200; exit 8;; esac
printf "TIMEOUT %d\n" "$to" >&3; rl $((T-SECONDS>0?T-SECONDS:1)) || exit 10
case $l in OK*) ;; *) printf "%s\n" "$l" | cut -c1-200; exit 9;; esac
if [ "$4" = json ]; then
  printf "SET FORMAT json\n" >&3; rl $((T-SECONDS>0?T-SECONDS:1)) || exit 10
  case $l in OK*) ;; *) printf "%s\n" "$l" | cut -c1-200; exit 9;; esac
fi
printf "VERBOSE STATUS\n" >&3
while :; do
  r=$((T-SECONDS)); [ $r -gt 0 ] || exit 10
  IFS= read -r -t $r l <&3; c=$?
  if [ $c -eq 0 ]; then printf "%s\n" "$l"; elif [ $c -gt 128 ]; then printf "%s" "$l"; exit 10; else printf "%s" "$l"; exit 0; fi
done' q "$T" "$to" "$p" "$1"; }
  echo "$m ras protocol json"; q json; e=$?; echo "$m ras-exit $e"
  case $e in 0|9) echo "$m ras protocol text"; q text; echo "$m ras-exit $?";; esac
else
  echo "$m ras none"
fi
`)
	if o.Log != "" {
		fmt.Fprintf(&b, "echo \"$m log\"; tail -n %d %s\n", lines, shell.Quote(o.Log))
	}
	b.WriteString("echo \"$m end\"\n")
	return b.String()
}

// Process is one process that maps a libnccl.
type Process struct {
	PID  int
	Cmd  string
	Libs []string
	// State is /proc/PID/stat's state ("R", "S", "T" for stopped, "t"
	// for traced); Rank the launcher's rank from its environment
	// (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID;
	// -1 when none).
	State string
	Rank  int
}

// Library is one libnccl file a node's processes map.
type Library struct {
	Path    string
	BuildID string // "" when it could not be read
	Version string // from the "NCCL version x.y.z" string inside it
	Err     string
}

// RASAnswer is one RAS query's answer on a node.
type RASAnswer struct {
	Client string // "ncclras" or "protocol" (sparkrig's own client)
	Format string // "json" or "text"
	Raw    []byte
	Exit   int
}

// Sample is what one node showed at one moment.
type Sample struct {
	Host    string // as sparkrig reached it
	Name    string // the node's own hostname
	Addrs   []string
	Procs   []Process
	Libs    []Library
	GPUs    []GPU
	Apps    []App
	RAS     []RASAnswer
	NoRAS   bool // neither ncclras nor bash on the node
	Log     []string
	Err     string // the node could not be sampled
	Elapsed float64
}

// ParseSample reads Script's output from one node.
func ParseSample(host string, b []byte) Sample {
	s := Sample{Host: host}
	var sec, arg string
	var buf bytes.Buffer
	libIdx := map[string]int{}
	lib := func(path string) *Library {
		i, ok := libIdx[path]
		if !ok {
			s.Libs = append(s.Libs, Library{Path: path})
			i = len(s.Libs) - 1
			libIdx[path] = i
		}
		return &s.Libs[i]
	}
	flush := func() {
		body := buf.Bytes()
		switch sec {
		case "gpus":
			s.GPUs, _ = ParseGPUs(body)
		case "apps":
			s.Apps, _ = ParseApps(body)
		case "elf":
			raw, err := hex.DecodeString(strings.Join(strings.Fields(string(body)), ""))
			l := lib(arg)
			if err != nil || len(raw) == 0 {
				l.Err = "could not read the library"
				break
			}
			if id, err := capture.BuildID(raw); err == nil {
				l.BuildID = id
			} else {
				l.Err = err.Error()
			}
		case "version":
			lib(arg).Version = libVersion(body)
		case "ras":
			f := strings.Fields(arg)
			if len(f) == 2 {
				s.RAS = append(s.RAS, RASAnswer{Client: f[0], Format: f[1], Raw: bytes.Clone(body), Exit: -1})
			}
		}
		buf.Reset()
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		l := sc.Text()
		if rest, ok := strings.CutPrefix(l, marker+" "); ok {
			name, a, _ := strings.Cut(rest, " ")
			if name == "ras-exit" {
				flush()
				if n := len(s.RAS); n > 0 {
					s.RAS[n-1].Exit, _ = strconv.Atoi(a)
				}
				sec, arg = "", ""
				continue
			}
			flush()
			sec, arg = name, a
			if name == "ras" && a == "none" {
				s.NoRAS = true
			}
			continue
		}
		switch sec {
		case "host":
			if s.Name == "" {
				s.Name = strings.TrimSpace(l)
			}
		case "addrs":
			if a := strings.TrimSpace(l); a != "" {
				s.Addrs = append(s.Addrs, a)
			}
		case "procs":
			switch {
			case strings.HasPrefix(l, "pid "):
				s.Procs = append(s.Procs, Process{PID: atoi(strings.TrimPrefix(l, "pid ")), Rank: -1})
			case strings.HasPrefix(l, "state ") && len(s.Procs) > 0:
				s.Procs[len(s.Procs)-1].State = strings.TrimSpace(strings.TrimPrefix(l, "state "))
			case strings.HasPrefix(l, "env ") && len(s.Procs) > 0:
				if _, v, ok := strings.Cut(l, "="); ok {
					if n, err := strconv.Atoi(v); err == nil && n >= 0 {
						s.Procs[len(s.Procs)-1].Rank = n
					}
				}
			case strings.HasPrefix(l, "cmd ") && len(s.Procs) > 0:
				s.Procs[len(s.Procs)-1].Cmd = strings.TrimSpace(strings.TrimPrefix(l, "cmd "))
			case strings.HasPrefix(l, "lib ") && len(s.Procs) > 0:
				p := &s.Procs[len(s.Procs)-1]
				p.Libs = append(p.Libs, strings.TrimPrefix(l, "lib "))
			}
		case "log":
			s.Log = append(s.Log, l)
		default:
			buf.WriteString(l)
			buf.WriteByte('\n')
		}
	}
	flush()
	return s
}

// libVersion is the version in a library's "NCCL version x.y.z..."
// string: it ends at the string's NUL (or any control character or
// space), never past it.
func libVersion(b []byte) string {
	v := strings.TrimPrefix(strings.TrimSpace(string(b)), "NCCL version ")
	if i := strings.IndexFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f || r == ' ' || r == utf8.RuneError }); i >= 0 {
		v = v[:i]
	}
	return v
}

// Status is the job's state from this sample's RAS answers: JSON where
// the node gave it, else text; nil when no answer could be read.
func (s Sample) Status() (*results.NCCLRAS, *RASAnswer) {
	for _, want := range []string{"json", "text"} {
		for i, a := range s.RAS {
			if a.Format != want || a.Exit != 0 || len(bytes.TrimSpace(a.Raw)) == 0 {
				continue
			}
			if st, err := results.ParseRASAnswer(a.Raw); err == nil {
				return &st, &s.RAS[i]
			}
		}
	}
	return nil, nil
}

// RASProblem is why no RAS answer of this sample could be read: the
// first query's failure in words ("" when one was read or none was made).
func (s Sample) RASProblem() string {
	if st, _ := s.Status(); st != nil {
		return ""
	}
	for _, a := range s.RAS {
		if p := rasProblem(a); p != "" {
			return p
		}
	}
	if len(s.RAS) > 0 {
		return "the RAS answer could not be read as NCCL's"
	}
	return ""
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
