package render

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/sanitize"
)

// The sections of a report that holds several commands' results (sparkrig
// report over doctor, qualify and triage documents): each part as its own
// command shows it, its findings among the cluster's.

func textAllPairs(w io.Writer, r *report.Report, opt Options) error {
	if r.AllPairs == nil {
		return nil
	}
	if err := AllPairsText(w, r.AllPairs, opt); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func textTriage(w io.Writer, r *report.Report, opt Options) error {
	if r.Triage == nil {
		return nil
	}
	if err := TriageText(w, r.Triage, nil, opt); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// mdAllPairs writes an all-pairs run: the matrix as a table (rows send,
// columns receive), the suspects with their evidence, the pairs' NCCL
// tests and each node's pass ratios.
func mdAllPairs(w io.Writer, r *report.Report, _ Options) error {
	ap := r.AllPairs
	if ap == nil {
		return nil
	}
	p := &printer{w: w}
	head := fmt.Sprintf("%s · %d nodes · %d round%s of %.1f s · %s", ap.Schedule, len(ap.Nodes), ap.Rounds, plural(ap.Rounds), ap.TestSeconds, ap.Tool)
	if ap.Segment != "" {
		head += " · " + ap.Segment
	}
	p.line("### all-pairs qualification")
	p.line("")
	p.line("%s · %.1f s", sanitize.Markdown(head), ap.WallSeconds)
	p.line("")
	if len(ap.Tools) == 0 {
		p.line("Reference: %s %s; a direction passes at %s or more.", sanitize.Markdown(ap.RefName), gbps(ap.Reference), gbps(ap.Floor))
	}
	for _, t := range ap.Tools {
		p.line("- reference for %s: %s; a direction passes at %s or more", sanitize.Markdown(t.Tool), gbps(t.Reference), gbps(t.Floor))
	}
	p.line("")
	header := []string{"Gb/s from ↓ to →"}
	for j := range ap.Nodes {
		header = append(header, "+"+strconv.Itoa(j+1))
	}
	var rows [][]string
	for i, row := range ap.Matrix {
		if i >= len(ap.Nodes) {
			break
		}
		cells := []string{fmt.Sprintf("%d %s", i+1, sanitize.Markdown(ap.Nodes[i]))}
		for j, v := range row {
			switch {
			case i == j:
				cells = append(cells, "·")
			case v < 0:
				cells = append(cells, "**×**")
			case v == 0:
				cells = append(cells, "-")
			case v < ap.FloorAt(i, j):
				cells = append(cells, "**"+rate(v)+"!**")
			default:
				cells = append(cells, rate(v))
			}
		}
		rows = append(rows, cells)
	}
	if p.err == nil {
		p.err = mdTable(w, header, rows)
	}
	p.line("Rows send, columns receive; ! below the floor, × did not complete.")
	p.line("")
	if len(ap.Suspects) == 0 {
		p.line("No suspect: every node, cable and pair passed.")
	}
	for _, s := range ap.Suspects {
		sev := map[string]string{"confirmed": "fail", "suspect": "warn", "cleared": "ok"}[s.Status]
		p.line("- %s **%s** — %s (%s)", mdSeverity(sev), sanitize.Markdown(s.Name), s.Status, sanitize.Markdown(s.Kind))
		for _, e := range s.Evidence {
			p.line("  - %s", sanitize.Markdown(e))
		}
	}
	if n := ap.NCCL; n != nil {
		p.line("")
		if len(n.Pairs) > 0 {
			p.line("**%s**, pair by pair: reference the best pairs' %s busbw; a pair passes at %s or more.", sanitize.Markdown(n.Tool), gbytes(n.Reference), gbytes(n.Floor))
			p.line("")
			rows = nil
			for _, pr := range n.Pairs {
				bw, verdict := gbytes(pr.BusGBs), mdSeverity("ok")
				if pr.Error != "" {
					bw = "×"
				}
				if !pr.Pass {
					verdict = mdSeverity("warn") + " " + sanitize.Markdown(cmpOr(pr.Error, "below the floor"))
				}
				rows = append(rows, []string{sanitize.Markdown(pr.A), sanitize.Markdown(pr.B), bw, humanSize(pr.Bytes), sanitize.Markdown(pr.NCCLVersion), verdict})
			}
			if p.err == nil {
				p.err = mdTable(w, []string{"rank 0", "rank 1", "+busbw", "+size", "NCCL", "verdict"}, rows)
			}
			for _, s := range n.Suspects {
				p.line("- %s **%s** — %s", mdSeverity("warn"), sanitize.Markdown(s.Name), s.Status)
				for _, e := range s.Evidence {
					p.line("  - %s", sanitize.Markdown(e))
				}
			}
		}
		for _, s := range n.Skipped {
			p.line("- %s", sanitize.Markdown(s))
		}
	}
	p.line("")
	rows = nil
	for _, s := range ap.Scores {
		rows = append(rows, []string{sanitize.Markdown(s.Node), fmt.Sprintf("%d/%d", s.TxPass, s.TxTests), gbps(s.TxMedian), fmt.Sprintf("%d/%d", s.RxPass, s.RxTests), gbps(s.RxMedian)})
	}
	if p.err == nil && len(rows) > 0 {
		p.err = mdTable(w, []string{"node", "+sent: passed", "+median", "+received: passed", "+median"}, rows)
	}
	return p.err
}

func cmpOr(s, or string) string {
	if s == "" {
		return or
	}
	return s
}

// mdTriage writes a triage: the verdict and the first failing rank, the
// evidence, the ranks' operation counts and the libnccl builds.
func mdTriage(w io.Writer, r *report.Report, _ Options) error {
	t := r.Triage
	if t == nil {
		return nil
	}
	p := &printer{w: w}
	head := "### triage: " + sanitize.Markdown(t.Verdict)
	if t.FirstRank >= 0 {
		head += fmt.Sprintf(" — first failing rank %d", t.FirstRank)
		if t.FirstNode != "" {
			head += " on " + sanitize.Markdown(t.FirstNode)
		}
	}
	p.line("%s", head)
	p.line("")
	meta := fmt.Sprintf("%d node(s)", len(t.Nodes))
	if t.NCCLVersion != "" {
		meta += " · NCCL " + sanitize.Markdown(t.NCCLVersion)
	}
	p.line("%s · samples %.0f s apart · %.1f s", meta, t.IntervalSeconds, t.WallSeconds)
	p.line("")
	for _, e := range t.Evidence {
		p.line("- %s", sanitize.Markdown(e))
	}
	if len(t.Ranks) > 0 {
		p.line("")
		var rows [][]string
		for _, rk := range t.Ranks {
			state := ""
			switch {
			case rk.Missing:
				state = "missing"
			case rk.Error != "":
				state = sanitize.Markdown(rk.Error)
			}
			rows = append(rows, []string{strconv.Itoa(rk.Rank), sanitize.Markdown(cmpOr(rk.Node, rk.Addr)), strconv.Itoa(rk.PID), opsText(rk.Ops), state})
		}
		if p.err == nil {
			p.err = mdTable(w, []string{"+rank", "node", "+pid", "operations", ""}, rows)
		}
	}
	if len(t.Libraries) > 0 {
		var rows [][]string
		for _, l := range t.Libraries {
			rows = append(rows, []string{mdCode(sanitize.Line(l.Path)), sanitize.Markdown(l.BuildID), sanitize.Markdown(l.Version), sanitize.Markdown(strings.Join(l.Nodes, ", "))})
		}
		if p.err == nil {
			p.err = mdTable(w, []string{"libnccl", "build ID", "version", "nodes"}, rows)
		}
	}
	for _, n := range t.Nodes {
		if n.Error != "" {
			p.line("- %s not sampled: %s", sanitize.Markdown(n.Host), sanitize.Markdown(n.Error))
		}
	}
	for _, n := range t.Nodes {
		if len(n.Log) > 0 && p.err == nil {
			p.err = mdDetails(w, "log on "+sanitize.Line(n.Host), "", sanitize.Text(strings.Join(n.Log, "\n")))
		}
	}
	if p.err == nil {
		p.line("")
	}
	return p.err
}

// textParts are the parts a report shows as their commands print them: a
// bench plan, a fix plan, a comparison and GPU results.
var textParts = []struct {
	id, title string
	has       func(*report.Report) bool
	write     func(io.Writer, *report.Report, Options) error
}{
	{"bench-plan", "Bench plan", func(r *report.Report) bool { return r.BenchPlan != nil }, textBenchPlan},
	{"fix-plan", "Fix plan", func(r *report.Report) bool { return r.FixPlan != nil }, textFixPlan},
	{"comparison", "Bench comparison", func(r *report.Report) bool { return r.Comparison != nil }, textComparison},
	{"gpu", "GPU results", func(r *report.Report) bool { return r.GPU != nil }, textGPU},
}

// partText is one of textParts as its command prints it, without colour.
type partText struct{ ID, Title, Text string }

func partTexts(r *report.Report) ([]partText, error) {
	var out []partText
	for _, p := range textParts {
		if !p.has(r) {
			continue
		}
		var b bytes.Buffer
		if err := p.write(safe(&b), r, Options{Width: 100}); err != nil {
			return nil, err
		}
		out = append(out, partText{ID: p.id, Title: p.title, Text: strings.TrimRight(b.String(), "\n")})
	}
	return out, nil
}

// mdParts writes the bench and fix plans, a comparison and GPU results as
// their commands print them, each folded in a <details>.
func mdParts(w io.Writer, r *report.Report, _ Options) error {
	parts, err := partTexts(r)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if err := mdDetails(w, p.Title, "text", p.Text); err != nil {
			return err
		}
	}
	return nil
}

// addSections embeds an all-pairs run (its heatmap, suspects, NCCL pairs
// and scores) and a triage in the report's page, as qualify and triage
// draw them, and the other parts as their commands print them; their
// findings are the cluster's, among the page's findings.
func addSections(p *page, r *report.Report) error {
	var b bytes.Buffer
	if r.AllPairs != nil {
		if err := allPairsPage().ExecuteTemplate(&b, "allpairs-body", struct{ AP *report.AllPairs }{r.AllPairs}); err != nil {
			return err
		}
		p.AllPairs = template.HTML(b.String()) // escaped by html/template
	}
	if r.Triage != nil {
		b.Reset()
		if err := triagePage().ExecuteTemplate(&b, "triage-body", struct {
			T *report.Triage
			F []report.Finding
		}{r.Triage, nil}); err != nil {
			return err
		}
		p.Triage = template.HTML(b.String())
	}
	parts, err := partTexts(r)
	p.Parts = parts
	return err
}
