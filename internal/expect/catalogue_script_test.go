package expect

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The catalogue's script reads source trees offline: WARN calls over
// several lines, a macro between literals, NOWARN and the macro's own
// definition passed over, rows merged across releases, classes by path.
func TestCatalogueScript(t *testing.T) {
	if _, err := exec.LookPath("awk"); err != nil {
		t.Skip("no awk")
	}
	dir := t.TempDir()
	tree := func(name, version, src string) string {
		root := filepath.Join(dir, name)
		for path, text := range map[string]string{
			"makefiles/version.mk":    "NCCL_MAJOR   := 2\nNCCL_MINOR   := " + version + "\nNCCL_PATCH   := 1\n",
			"src/transport/net_ib.cc": src,
			"src/include/debug.h":     "#define WARN(...) ncclDebugLog(NCCL_LOG_WARN, __VA_ARGS__)\n",
			"src/init.cc":             "  NOWARN(x(), NCCL_INIT);\n  WARN(\"Invalid config %d\", v);\n",
		} {
			p := filepath.Join(root, path)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return root
	}
	old := tree("a", "18", "void f() {\n  WARN(\"NET/IB : Got completion from peer %s with error %d\",\n       addr, err);\n}\n")
	neu := tree("b", "30", "\n\nvoid f() {\n  WARN(\"NET/IB : Got completion from peer %s with error %d\",\n       addr, err);\n  WARN(\"size %\" PRIu64 \" too big\", n);\n}\n")
	out, err := exec.Command("sh", "../../scripts/nccl-catalogue/catalogue.sh", old, neu).Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := strings.Join([]string{
		"init-config\tInvalid config %d\tsrc/init.cc:2\t2.18.1\t2.30.1\t2.18.1,2.30.1",
		"net-ib\tNET/IB : Got completion from peer %s with error %d\tsrc/transport/net_ib.cc:4\t2.18.1\t2.30.1\t2.18.1,2.30.1",
		"net-ib\tsize %%? too big\tsrc/transport/net_ib.cc:6\t2.30.1\t2.30.1\t2.30.1",
	}, "\n") + "\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	if _, err := ParseNCCLWarns(out); err != nil {
		t.Errorf("the script's output does not parse: %v", err)
	}
}
