package bench

import (
	"github.com/sparkrig/sparkrig/internal/fabric"
	"github.com/sparkrig/sparkrig/internal/facts"
)

// The rails and the environment come from internal/fabric, which fix and the
// doctor use too.
type (
	Link       = fabric.Link
	LinkEnd    = fabric.LinkEnd
	Endpoint   = fabric.Endpoint
	Rail       = fabric.Rail
	Note       = fabric.Note
	Var        = fabric.Var
	EnvOptions = fabric.EnvOptions
)

// Rails pairs the nodes' netdevs into rails (fabric.Rails).
var Rails = fabric.Rails

// NCCLEnv is the cluster's environment (fabric.NCCLEnv) plus the debug
// settings whose log lines the bench reads to judge the run.
func NCCLEnv(nodes []*facts.Node, rails []Rail, o EnvOptions) ([]Var, []Note) {
	env, notes := fabric.NCCLEnv(nodes, rails, o)
	return append(env, Var{Name: "NCCL_DEBUG", Value: "INFO"}, Var{Name: "NCCL_DEBUG_SUBSYS", Value: "INIT,NET"}), notes
}
