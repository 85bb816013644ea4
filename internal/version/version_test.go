package version

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	for _, c := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"go install at a tag", debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}}, "v0.3.0"},
		{"go build in a clone", debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261123235601-194718b1c2d3+dirty"}}, "v0.0.0-20261123235601-194718b1c2d3+dirty"},
		{"vcs settings only", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "194718b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7"}, {Key: "vcs.modified", Value: "false"}}}, "devel-194718b1c2d3"},
		{"dirty checkout", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "194718b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7"}, {Key: "vcs.modified", Value: "true"}}}, "devel-194718b1c2d3+dirty"},
		{"nothing recorded", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
	} {
		if got := fromBuildInfo(&c.bi); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
