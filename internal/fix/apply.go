package fix

import (
	"github.com/sparkrig/sparkrig/internal/runner"

	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"
)

// ApplyOptions tune Apply.
type ApplyOptions struct {
	Activation Activation
	// DeadMan is how long the host waits for the controller's confirmation
	// before it restores the backup by itself (default 90 s).
	DeadMan time.Duration
	// Settle is how long to wait after staging before checking (default 3 s).
	Settle time.Duration
	// Probe bounds each check-back call after the change (default 15 s):
	// short, because a host the change cut off must be noticed quickly.
	Probe time.Duration
	// Read bounds reading the host before anything is changed (default
	// 60 s): nothing is at stake yet, so a slow or busy host gets time.
	Read  time.Duration
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
	if o.Read == 0 {
		o.Read = 60 * time.Second
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
func Apply(ctx context.Context, hp HostPlan, t Target, opt ApplyOptions) Outcome {
	opt.setDefaults()
	out := Outcome{Host: hp.Host}
	if !hp.Changed() {
		out.Status = Unchanged
		return out
	}
	before, err := observe(ctx, t, opt.Read)
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
		var se *runner.ExitError
		if errors.As(err, &se) && se.Exit == 3 {
			out.Status, out.Detail = Refused, strings.TrimSpace(se.Stderr)
			return out
		}
		return fail(out, "stage: %v (if staging got as far as arming the timer, the host restores %s by itself within %s)", err, path.Join(BackupRoot, opt.Stamp), opt.DeadMan)
	}
	out.Backup = path.Join(BackupRoot, opt.Stamp)
	if !sleep(ctx, opt.Settle) {
		return fail(out, "interrupted; the dead-man timer restores %s in %s unless confirmed", out.Backup, opt.DeadMan)
	}
	return checkBack(ctx, hp, t, before, out, opt)
}

// checkBack waits for the host to answer with the activation done, then
// judges it: new problems roll back at once, none confirm. A host that does
// not answer is given until its dead-man timer has fired; if it answers
// again before that, it is judged as usual.
func checkBack(ctx context.Context, hp HostPlan, t Target, before Observation, out Outcome, opt ApplyOptions) Outcome {
	start := time.Now()
	giveUp := start.Add(opt.DeadMan + 2*opt.Probe + 10*time.Second)
	lost := false
	for ; time.Now().Before(giveUp); sleep(ctx, time.Second) {
		if ctx.Err() != nil {
			return fail(out, "interrupted; the dead-man timer restores %s unless confirmed", out.Backup)
		}
		st, err := probe(ctx, t, statusScript(out.Backup), opt.Probe)
		switch {
		case err != nil:
			if !lost {
				fmt.Fprintf(opt.Log, "%s: no answer after the change (%v); the dead-man timer restores in %s unless the host comes back\n", hp.Host, err, opt.DeadMan)
			}
			lost = true
			continue
		case strings.Contains(st, "restored"):
			out.Status, out.Detail = RolledBackTimer, "the host stopped answering after the change; its dead-man timer restored "+out.Backup
			return out
		case strings.Contains(st, "activate pending"):
			continue // the timer restores if activation hangs past it
		}
		after, err := observe(ctx, t, opt.Probe)
		if err != nil {
			lost = true
			continue
		}
		return judge(ctx, hp, t, before, after, out, opt)
	}
	return fail(out, "the host does not answer %s after the change; its dead-man timer should have restored %s", time.Since(start).Round(time.Second), out.Backup)
}

// judge compares the host after the change with before and with the plan,
// then confirms or restores.
func judge(ctx context.Context, hp HostPlan, t Target, before, after Observation, out Outcome, opt ApplyOptions) Outcome {
	out.After = append(Problems(hp, after), collateral(hp, before, after)...)
	out.After = append(out.After, doctorRegressions(hp.Host, before, after)...)
	if worse := newProblems(out.Before, out.After); len(worse) > 0 {
		if _, err := probe(ctx, t, restoreNowScript(out.Backup), opt.Probe); err != nil && !runner.Answered(err) {
			return checkBack(ctx, hp, t, before, out, opt)
		}
		out.Status, out.Detail = RolledBack, "checks got worse: "+strings.Join(worse, "; ")
		return out
	}
	if _, err := probe(ctx, t, confirmScript(out.Backup), opt.Probe); err != nil {
		if runner.Answered(err) {
			out.Status, out.Detail = RolledBackTimer, err.Error()
			return out
		}
		return checkBack(ctx, hp, t, before, out, opt)
	}
	out.Status = Applied
	return out
}

func probe(ctx context.Context, t Target, script string, limit time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	b, err := t.Run(ctx, script)
	return string(b), err
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

func observe(ctx context.Context, t Target, limit time.Duration) (Observation, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	b, err := t.Run(ctx, ObserveScript())
	if err != nil {
		return Observation{}, err
	}
	return ParseObservation(b)
}

// Rollback restores the newest backup on the host that is not restored yet.
func Rollback(ctx context.Context, t Target) (string, error) {
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
