package fix

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"
)

// Transport runs a POSIX sh script as root on one host. Each call opens a
// fresh connection, so a successful call also proves the host answers now.
type Transport interface {
	Run(ctx context.Context, script string) ([]byte, error)
}

// ScriptError is a script that ran and exited non-zero: the host answered.
type ScriptError struct {
	Exit   int
	Stderr string
}

func (e *ScriptError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = "no message"
	}
	return fmt.Sprintf("exit %d: %s", e.Exit, msg)
}

// answered reports whether err still means the host was reached.
func answered(err error) bool {
	var se *ScriptError
	return err == nil || errors.As(err, &se)
}

// ApplyOptions tune Apply.
type ApplyOptions struct {
	Activation Activation
	// DeadMan is how long the host waits for the controller's confirmation
	// before it restores the backup by itself (default 90 s).
	DeadMan time.Duration
	// Settle is how long to wait after staging before checking (default 3 s).
	Settle time.Duration
	// Probe bounds each check-back call (default 15 s).
	Probe time.Duration
	Stamp string    // backup directory name; default Stamp(time.Now())
	Log   io.Writer // progress lines; nil for none
}

func (o *ApplyOptions) setDefaults() {
	if o.DeadMan == 0 {
		o.DeadMan = 90 * time.Second
	}
	if o.Settle == 0 {
		o.Settle = 3 * time.Second
	}
	if o.Probe == 0 {
		o.Probe = 15 * time.Second
	}
	if o.Stamp == "" {
		o.Stamp = Stamp(time.Now())
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
}

// Outcome statuses.
const (
	Unchanged       = "unchanged"         // nothing to write
	Applied         = "applied"           // written, active, checks held, timer cancelled
	RolledBack      = "rolled-back"       // the checks got worse; restored by the controller
	RolledBackTimer = "rolled-back-timer" // the host stopped answering; restored by its dead-man timer
	Refused         = "refused"           // the host refused before changing anything
	Failed          = "failed"            // could not stage, or the host is still unreachable
)

// Outcome is what Apply did on one host.
type Outcome struct {
	Host   string   `json:"host"`
	Status string   `json:"status"`
	Backup string   `json:"backup,omitempty"`
	Detail string   `json:"detail,omitempty"`
	Before []string `json:"problems_before,omitempty"`
	After  []string `json:"problems_after,omitempty"`
}

// Apply carries out one host's plan: check the host, back up, write, arm the
// dead-man timer, activate, check back with a fresh connection, and then
// confirm, or roll back when the checks got worse. When the host stops
// answering, the timer on the host restores the backup; Apply waits for it
// and says so.
func Apply(ctx context.Context, hp HostPlan, t Transport, opt ApplyOptions) Outcome {
	opt.setDefaults()
	out := Outcome{Host: hp.Host}
	if !hp.Changed() {
		out.Status = Unchanged
		return out
	}
	before, err := observe(ctx, t, opt.Probe)
	if err != nil {
		return fail(out, "read the host before changing it: %v", err)
	}
	if slices.Contains(railNames(hp), before.SSHIface) {
		out.Status, out.Detail = Refused, "the SSH session arrives on "+before.SSHIface+", which the plan reconfigures"
		return out
	}
	out.Before = Problems(hp, before)
	fmt.Fprintf(opt.Log, "%s: staging (backup %s, dead-man timer %s)\n", hp.Host, path.Join(BackupRoot, opt.Stamp), opt.DeadMan)
	if _, err := t.Run(ctx, stageScript(hp, opt.Stamp, opt.Activation, opt.DeadMan)); err != nil {
		var se *ScriptError
		if errors.As(err, &se) && se.Exit == 3 {
			out.Status, out.Detail = Refused, strings.TrimSpace(se.Stderr)
			return out
		}
		return fail(out, "stage: %v", err)
	}
	out.Backup = path.Join(BackupRoot, opt.Stamp)
	if !sleep(ctx, opt.Settle) {
		return fail(out, "interrupted; the dead-man timer restores %s in %s unless confirmed", out.Backup, opt.DeadMan)
	}
	after, err := waitActivated(ctx, t, out.Backup, opt)
	if err != nil {
		fmt.Fprintf(opt.Log, "%s: no answer after activation (%v); waiting for the dead-man timer\n", hp.Host, err)
		return awaitTimer(ctx, t, out, opt)
	}
	out.After = append(Problems(hp, after), collateral(hp, before, after)...)
	out.After = append(out.After, doctorRegressions(hp.Host, before, after)...)
	if len(newProblems(out.Before, out.After)) > 0 {
		if _, err := t.Run(ctx, restoreNowScript(out.Backup)); err != nil {
			return awaitTimer(ctx, t, out, opt)
		}
		out.Status, out.Detail = RolledBack, "checks got worse: "+strings.Join(newProblems(out.Before, out.After), "; ")
		return out
	}
	if _, err := t.Run(ctx, confirmScript(out.Backup)); err != nil {
		if answered(err) {
			out.Status, out.Detail = RolledBackTimer, err.Error()
			return out
		}
		return awaitTimer(ctx, t, out, opt)
	}
	out.Status = Applied
	return out
}

func fail(o Outcome, format string, a ...any) Outcome {
	o.Status, o.Detail = Failed, fmt.Sprintf(format, a...)
	return o
}

func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

func observe(ctx context.Context, t Transport, limit time.Duration) (Observation, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	b, err := t.Run(ctx, ObserveScript())
	if err != nil {
		return Observation{}, err
	}
	return ParseObservation(b)
}

// waitActivated checks back until the activation has finished, then observes.
func waitActivated(ctx context.Context, t Transport, dir string, opt ApplyOptions) (Observation, error) {
	deadline := time.Now().Add(opt.DeadMan / 2)
	for {
		cctx, cancel := context.WithTimeout(ctx, opt.Probe)
		b, err := t.Run(cctx, statusScript(dir))
		cancel()
		if err != nil {
			return Observation{}, err
		}
		if !strings.Contains(string(b), "activate pending") || time.Now().After(deadline) {
			return observe(ctx, t, opt.Probe)
		}
		if !sleep(ctx, time.Second) {
			return Observation{}, ctx.Err()
		}
	}
}

// awaitTimer waits out the host's dead-man timer, then checks that the
// host answers again and has restored the backup.
func awaitTimer(ctx context.Context, t Transport, out Outcome, opt ApplyOptions) Outcome {
	deadline := time.Now().Add(opt.DeadMan + 2*opt.Probe + 10*time.Second)
	for time.Now().Before(deadline) {
		if !sleep(ctx, 2*time.Second) {
			return fail(out, "interrupted while waiting for the dead-man timer to restore %s", out.Backup)
		}
		cctx, cancel := context.WithTimeout(ctx, opt.Probe)
		b, err := t.Run(cctx, statusScript(out.Backup))
		cancel()
		if err == nil && strings.Contains(string(b), "restored") {
			out.Status, out.Detail = RolledBackTimer, "the host stopped answering after the change; its dead-man timer restored "+out.Backup
			return out
		}
	}
	return fail(out, "the host still does not answer %s after the change; its dead-man timer should have restored %s", opt.DeadMan, out.Backup)
}

// Rollback restores the newest backup on the host that is not restored yet.
func Rollback(ctx context.Context, t Transport) (string, error) {
	b, err := t.Run(ctx, rollbackLatestScript())
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(strings.TrimSpace(string(b)), "restored "), nil
}

func railNames(hp HostPlan) []string {
	out := make([]string, len(hp.Rails))
	for i, r := range hp.Rails {
		out[i] = r.NetDev
	}
	return out
}
