// Package kubernetes holds sparkrig's Kubernetes manifests; its test decodes
// them strictly against the Kubernetes API types and checks the
// node-problem-detector plugin configs they carry.
package kubernetes

import (
	"bytes"
	"encoding/json"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkrig/sparkrig/internal/check"
	"github.com/sparkrig/sparkrig/internal/health"
)

// documents splits a YAML stream on "---" lines.
func documents(t *testing.T, file string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, d := range bytes.Split(b, []byte("\n---\n")) {
		if len(bytes.TrimSpace(d)) > 0 {
			out = append(out, d)
		}
	}
	return out
}

// decodeAll decodes every manifest strictly (an unknown or misspelt field
// fails) into its API type, by kind.
func decodeAll(t *testing.T) map[string]any {
	t.Helper()
	objs := map[string]any{}
	for _, file := range []string{"sparkrig-npd.yaml", "sparkrig-npd-config.yaml"} {
		for _, d := range documents(t, file) {
			var meta struct{ APIVersion, Kind string }
			if err := yaml.Unmarshal(d, &meta); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			var obj any
			switch meta.APIVersion + " " + meta.Kind {
			case "v1 Namespace":
				obj = &corev1.Namespace{}
			case "v1 ServiceAccount":
				obj = &corev1.ServiceAccount{}
			case "v1 ConfigMap":
				obj = &corev1.ConfigMap{}
			case "apps/v1 DaemonSet":
				obj = &appsv1.DaemonSet{}
			case "rbac.authorization.k8s.io/v1 ClusterRoleBinding":
				obj = &rbacv1.ClusterRoleBinding{}
			default:
				t.Fatalf("%s: unexpected %s %s", file, meta.APIVersion, meta.Kind)
			}
			if err := yaml.UnmarshalStrict(d, obj); err != nil {
				t.Fatalf("%s: %s: %v", file, meta.Kind, err)
			}
			objs[meta.Kind] = obj
		}
	}
	return objs
}

// pluginConfig is node-problem-detector's custom plugin monitor config
// (kubernetes/node-problem-detector pkg/custompluginmonitor/types/config.go),
// the fields sparkrig's configs use.
type pluginConfig struct {
	Plugin       string `json:"plugin"`
	PluginConfig struct {
		InvokeInterval  string `json:"invoke_interval"`
		Timeout         string `json:"timeout"`
		MaxOutputLength int    `json:"max_output_length"`
		Concurrency     int    `json:"concurrency"`
		MessageChange   bool   `json:"enable_message_change_based_condition_update"`
	} `json:"pluginConfig"`
	Source           string `json:"source"`
	MetricsReporting bool   `json:"metricsReporting"`
	Conditions       []struct {
		Type, Reason, Message string
	} `json:"conditions"`
	Rules []struct {
		Type      string   `json:"type"`
		Condition string   `json:"condition"`
		Reason    string   `json:"reason"`
		Path      string   `json:"path"`
		Args      []string `json:"args"`
		Timeout   string   `json:"timeout"`
	} `json:"rules"`
}

func TestManifestsDecodeStrictly(t *testing.T) {
	objs := decodeAll(t)
	ds := objs["DaemonSet"].(*appsv1.DaemonSet)
	cm := objs["ConfigMap"].(*corev1.ConfigMap)
	spec := ds.Spec.Template.Spec
	if !spec.HostNetwork || spec.HostPID {
		t.Error("the plugin reads the node's netdevs (hostNetwork), never its processes (no hostPID)")
	}
	if ds.Spec.Selector.MatchLabels["app.kubernetes.io/name"] != "sparkrig" || ds.Spec.Template.Labels["app.kubernetes.io/name"] != "sparkrig" {
		t.Errorf("selector %v: sparkrig doctor --kubectl finds pods by app.kubernetes.io/name=sparkrig", ds.Spec.Selector.MatchLabels)
	}
	if len(spec.Containers) != 1 || spec.Containers[0].Name != "node-problem-detector" {
		t.Fatalf("containers %v: want one, node-problem-detector (doctor --kubectl's default)", spec.Containers)
	}
	c := spec.Containers[0]
	if c.SecurityContext == nil || c.SecurityContext.Privileged == nil || *c.SecurityContext.Privileged {
		t.Error("the container must not be privileged")
	}
	// Worker nodes only: no toleration matches the control plane's taint,
	// and the affinity leaves control-plane nodes out.
	cp := corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}
	for _, tol := range spec.Tolerations {
		// Kubernetes' rule (core/v1 Toleration.ToleratesTaint): an empty key
		// with Exists matches every taint; an empty effect every effect.
		keyMatch := tol.Key == cp.Key || tol.Key == "" && tol.Operator == corev1.TolerationOpExists
		if keyMatch && (tol.Effect == "" || tol.Effect == cp.Effect) {
			t.Errorf("toleration %+v lets the pod onto control-plane nodes", tol)
		}
	}
	excluded := false
	for _, term := range spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, e := range term.MatchExpressions {
			excluded = excluded || e.Key == cp.Key && e.Operator == corev1.NodeSelectorOpDoesNotExist
		}
	}
	if !excluded {
		t.Error("the node affinity must exclude node-role.kubernetes.io/control-plane")
	}
	// Only what the checks read, read-only, at its own path: never the
	// node's / (the capture runs in the container, not chrooted).
	need := map[string]bool{"/etc/netplan": true, "/etc/sysctl.d": true, "/etc/modprobe.d": true, "/etc/systemd/network": true,
		"/etc/security": true, "/etc/os-release": true, "/etc/machine-id": true, "/var/log/journal": true, "/etc/localtime": true}
	hostPaths := map[string]string{}
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			hostPaths[v.Name] = v.HostPath.Path
			if !need[v.HostPath.Path] {
				t.Errorf("volume %s mounts the node's %s, which no check reads", v.Name, v.HostPath.Path)
			}
		}
	}
	mounted := map[string]bool{}
	for _, m := range c.VolumeMounts {
		if !m.ReadOnly {
			t.Errorf("mount %s at %s is writable; every host mount is read-only", m.Name, m.MountPath)
		}
		mounted[m.Name] = true
		if p, ok := hostPaths[m.Name]; ok && p != m.MountPath {
			t.Errorf("the node's %s is mounted at %s: the capture reads it at its own path", p, m.MountPath)
		}
	}
	for _, v := range spec.Volumes {
		if !mounted[v.Name] {
			t.Errorf("volume %s is not mounted", v.Name)
		}
	}
	// Every config in the ConfigMap is passed to NPD, and nothing else.
	var flag string
	for _, a := range c.Command {
		if v, ok := strings.CutPrefix(a, "--config.custom-plugin-monitor="); ok {
			flag = v
		}
	}
	var want []string
	for k := range cm.Data {
		want = append(want, "/config/"+k)
	}
	got := strings.Split(flag, ",")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("--config.custom-plugin-monitor=%s, want the ConfigMap's %v", flag, want)
	}
}

// Each plugin config follows node-problem-detector's rules and NVSentinel's
// convention: one permanent condition per config with its default entry,
// the rule's timeout within the plugin's, and sparkrig told the output
// limit NPD cuts at.
func TestPluginConfigs(t *testing.T) {
	cm := decodeAll(t)["ConfigMap"].(*corev1.ConfigMap)
	if len(cm.Data) == 0 {
		t.Fatal("no plugin configs")
	}
	for name, text := range cm.Data {
		var pc pluginConfig
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&pc); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if pc.Plugin != "custom" || len(pc.Conditions) != 1 || len(pc.Rules) != 1 {
			t.Errorf("%s: want a custom plugin with one condition and one rule", name)
			continue
		}
		r, cond := pc.Rules[0], pc.Conditions[0]
		if r.Type != "permanent" || r.Condition != cond.Type || cond.Reason == "" || cond.Message == "" {
			t.Errorf("%s: rule %+v, condition %+v: a permanent rule on the config's one condition, with its default", name, r, cond)
		}
		total, err1 := time.ParseDuration(pc.PluginConfig.Timeout)
		rule, err2 := time.ParseDuration(r.Timeout)
		every, err3 := time.ParseDuration(pc.PluginConfig.InvokeInterval)
		if err1 != nil || err2 != nil || err3 != nil || rule > total || total >= every {
			t.Errorf("%s: rule timeout %s, plugin timeout %s, interval %s", name, r.Timeout, pc.PluginConfig.Timeout, pc.PluginConfig.InvokeInterval)
		}
		if path.Base(r.Path) != "sparkrig" || !slices.Contains(r.Args, "--npd") {
			t.Errorf("%s: runs %s %v, want sparkrig doctor --npd", name, r.Path, r.Args)
		}
		i := slices.Index(r.Args, "--npd-max-output")
		if i < 0 || i+1 >= len(r.Args) || r.Args[i+1] != "80" || pc.PluginConfig.MaxOutputLength != 80 {
			t.Errorf("%s: --npd-max-output %v must equal max_output_length %d", name, r.Args, pc.PluginConfig.MaxOutputLength)
		}
	}
}

// Every check a node's audit can report belongs to exactly one shipped
// condition: built from the check registry, so a new check without a
// condition (or in two) fails here.
func TestEveryCheckInOneCondition(t *testing.T) {
	cm := decodeAll(t)["ConfigMap"].(*corev1.ConfigMap)
	scopes := map[string][]string{}
	for name, text := range cm.Data {
		var pc pluginConfig
		if err := json.Unmarshal([]byte(text), &pc); err != nil || len(pc.Rules) != 1 {
			t.Fatalf("%s: %v", name, err)
		}
		args := pc.Rules[0].Args
		for i, a := range args {
			if a == "--npd-checks" && i+1 < len(args) {
				scopes[name] = append(scopes[name], args[i+1])
			}
		}
		if len(scopes[name]) == 0 {
			t.Errorf("%s covers every check: the conditions would overlap", name)
		}
	}
	ids := check.IDs()
	for _, want := range []string{"known.issue", "nic.link-flaps", "gpu.xid", check.ProfileID} {
		if !slices.Contains(ids, want) {
			t.Fatalf("the registry has no %s", want)
		}
	}
	for _, id := range ids {
		var in []string
		for name, patterns := range scopes {
			if health.MatchAny(patterns, id) {
				in = append(in, name)
			}
		}
		if len(in) != 1 {
			slices.Sort(in)
			t.Errorf("check %s is in %d conditions %v, want exactly one", id, len(in), in)
		}
	}
}

// The image is built per architecture (DGX Spark is arm64) from the
// binaries the Dockerfile's own instructions and the README build, and
// nothing calls the binary static: it is linked dynamically against libc.
func TestImageBuildsPerArchitecture(t *testing.T) {
	df, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile("sparkrig-npd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(df, []byte("ARG TARGETARCH\n")) || !bytes.Contains(df, []byte("COPY sparkrig-${TARGETARCH} /usr/local/bin/sparkrig\n")) {
		t.Errorf("the Dockerfile does not copy the binary of the image's architecture:\n%s", df)
	}
	for _, arch := range []string{"arm64", "amd64"} {
		build := "CGO_ENABLED=0 GOARCH=" + arch + " go build -o deploy/kubernetes/sparkrig-" + arch + " ./cmd/sparkrig"
		for name, doc := range map[string][]byte{"Dockerfile": df, "README.md": readme} {
			if !bytes.Contains(doc, []byte(build)) {
				t.Errorf("%s does not build %q", name, build)
			}
		}
	}
	for name, doc := range map[string][]byte{"Dockerfile": df, "sparkrig-npd.yaml": manifest} {
		if bytes.Contains(bytes.ToLower(doc), []byte("static")) {
			t.Errorf("%s calls the binary static", name)
		}
	}
	if !bytes.Contains(readme, []byte("--platform linux/arm64,linux/amd64")) {
		t.Error("the README builds no arm64 image")
	}
}
