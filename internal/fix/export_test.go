package fix

import "testing"

// GoldenPlans builds the plans of the topology table for the golden test in
// package fix_test, which renders them as `sparkrig fix --plan` does.
func GoldenPlans(t *testing.T) map[string]*Plan {
	out := map[string]*Plan{}
	for _, tc := range topoCases {
		out[tc.name] = buildCase(t, tc)
	}
	return out
}
