package cli

import (
	"bytes"

	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/report"
)

// newDocument is the report every command returns, stamped with the
// command's name; the command fills its content.
func newDocument(env *Env, command string) *report.Report {
	return &report.Report{Schema: report.SchemaVersion, Tool: "sparkrig", ToolVersion: Version, Command: command,
		GeneratedAt: env.Now().UTC(), Hosts: []report.Host{}}
}

// writeDocument renders a command's report in the chosen format, its
// status the report's one verdict unless the command set it.
func writeDocument(env *Env, r *report.Report, format string) error {
	if r.Status == "" {
		r.Status = r.Overall()
	}
	return render.Write(env.Stdout, r, format, textOptions(env))
}

// writeRendered renders a report into output (a file, or stdout when empty
// or "-"), without colour when it goes to a file.
func writeRendered(env *Env, output, format string, rep *report.Report) error {
	var buf bytes.Buffer
	opt := textOptions(env)
	if output != "" {
		opt.Color = false
	}
	if err := render.Write(&buf, rep, format, opt); err != nil {
		return err
	}
	return writeOut(env, output, buf.Bytes())
}
