package plan

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/report"
)

// Input is one file the caller read: its name (for messages and sources)
// and its bytes.
type Input struct {
	Name  string
	Bytes []byte
}

// Options is everything `sparkrig plan` is asked.
type Options struct {
	// Config is the model's config.json; ModelName names the model (its
	// directory), ModelArg is what the user typed and Serve the path the
	// engines' launch lines load.
	Config Input
	// QuantConfig is the checkpoint's hf_quant_config.json where it has one
	// (empty Bytes: none); config.json's own quantization_config, where it
	// has one, is read instead.
	QuantConfig Input
	ModelName   string
	ModelArg    string
	Serve       string
	// From are sparkrig JSON outputs with measured numbers.
	From []Input
	// Weights is the weight format; Requantize a recipe that re-quantises
	// layers at load ("attention,lm_head=mxfp4"), "" none.
	Weights    string
	Requantize string
	// Nodes 0: from the measurements, else 1. Platform "": from the
	// measurements, else dgx-spark.
	Nodes    int
	Platform string
	Workload Workload
	// ToolVersion and Now stamp the document.
	ToolVersion string
	Now         time.Time
}

// Run plans the model and returns the plan as a document. An error is bad
// input, said in one line.
func Run(ctx context.Context, o Options) (*report.Report, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a, err := DefaultAssumptions()
	if err != nil {
		return nil, err
	}
	format, err := a.Format(o.Weights)
	if err != nil {
		return nil, fmt.Errorf("--weights: %w", err)
	}
	if o.Workload.Requant, err = a.ParseRequant(o.Requantize); err != nil {
		return nil, fmt.Errorf("--requantize %w", err)
	}
	m, err := ParseConfig(o.Config.Bytes, o.ModelName)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Config.Name, err)
	}
	if len(o.QuantConfig.Bytes) > 0 && !m.quantRead {
		if err := m.ApplyQuantConfig(o.QuantConfig.Bytes); err != nil {
			return nil, fmt.Errorf("%s: %w", o.QuantConfig.Name, err)
		}
	}
	c, err := cluster(o, a)
	if err != nil {
		return nil, err
	}
	w := o.Workload
	w.KVDType = strings.ToLower(w.KVDType)
	p, err := Estimate(m, format, c, w, a)
	if err != nil {
		return nil, err
	}
	r := &report.Report{Schema: report.SchemaVersion, Tool: "sparkrig", ToolVersion: o.ToolVersion, Command: "plan",
		GeneratedAt: o.Now.UTC(), Hosts: []report.Host{}}
	r.Plans = []report.Plan{p.Report(o.ModelArg, p.Launches(p.Recommended, o.Serve))}
	r.Status = r.Overall()
	return r, nil
}

// cluster is the platform's numbers for the node count, with the measured
// ones in their place; a measurement from another platform is refused.
func cluster(o Options, a Assumptions) (Cluster, error) {
	var measured Measured
	for _, in := range o.From {
		if err := measured.ReadMeasured(in.Name, in.Bytes); err != nil {
			return Cluster{}, fmt.Errorf("--from %w", err)
		}
	}
	platform := cmp.Or(o.Platform, measured.OriginPlatform(), "dgx-spark")
	nodes := o.Nodes
	if nodes == 0 {
		nodes = max(measured.Nodes, 1)
	}
	if nodes < 1 || nodes > 1024 {
		return Cluster{}, fmt.Errorf("--nodes %d: want 1 to 1024", nodes)
	}
	set, err := expect.Default()
	if err != nil {
		return Cluster{}, err
	}
	c, err := PlatformCluster(platform, nodes, a, set)
	if err != nil {
		return Cluster{}, err
	}
	pn, _ := a.Platform(platform)
	if err := measured.CheckPlatform(platform, c.MemoryBandwidth.Value, pn.GPUsPerNode); err != nil {
		return Cluster{}, err
	}
	measured.Apply(&c)
	return c, nil
}
