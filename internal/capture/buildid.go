package capture

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ncclLibGlobs are where libnccl.so.2 lives: the distribution's package,
// builds from source, CUDA trees and the pip wheel nvidia-nccl-cu1x (system
// and user site-packages). The same version string can name different
// builds in these places, so each is identified by its ELF build ID.
var ncclLibGlobs = []string{
	"/usr/lib/*-linux-gnu/libnccl.so.2",
	"/usr/local/lib/libnccl.so.2",
	"/usr/local/cuda*/lib*/libnccl.so.2",
	"/usr/lib/python3/dist-packages/nvidia/nccl/lib/libnccl.so.2",
	"/usr/local/lib/python3*/dist-packages/nvidia/nccl/lib/libnccl.so.2",
	"$HOME/.local/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2",
}

// ncclBuildIDScript prints, for every libnccl.so.2 found, a line
// "== PATH<TAB>RESOLVED" and then its build ID as `readelf -n` prints it
// ("    Build ID: HEX"), or, without binutils, as `file -L` does
// ("...BuildID[sha1]=HEX, ..."). ncclBuildIDs writes the same locally.
func ncclBuildIDScript() string {
	return `for f in ` + strings.Join(ncclLibGlobs, " ") + `; do
[ -e "$f" ] || continue
r=$(readlink -f "$f" 2>/dev/null || echo "$f")
printf '== %s\t%s\n' "$f" "$r"
if command -v readelf >/dev/null 2>&1; then readelf -n "$r" 2>&1 | grep 'Build ID'
elif command -v file >/dev/null 2>&1; then file -L "$r"
else echo "no readelf or file on this node"; fi
done`
}

// ncclBuildIDs is ncclBuildIDScript's output, read with debug/elf.
func ncclBuildIDs() []byte {
	var b bytes.Buffer
	home, _ := os.UserHomeDir()
	for _, g := range ncclLibGlobs {
		g = strings.Replace(g, "$HOME", home, 1)
		matches, _ := filepath.Glob(g)
		for _, f := range matches {
			r, err := filepath.EvalSymlinks(f)
			if err != nil {
				continue
			}
			fmt.Fprintf(&b, "== %s\t%s\n", f, r)
			id, err := elfBuildID(r)
			if err != nil {
				fmt.Fprintf(&b, "readelf: %s: %v\n", r, err)
				continue
			}
			fmt.Fprintf(&b, "    Build ID: %s\n", id)
		}
	}
	return b.Bytes()
}

// elfBuildID returns the NT_GNU_BUILD_ID note of an ELF file, in hex.
func elfBuildID(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		if id, ok := gnuBuildID(data, f.ByteOrder); ok {
			return id, nil
		}
	}
	return "", fmt.Errorf("no GNU build ID note")
}

// gnuBuildID finds the NT_GNU_BUILD_ID note (type 3, name "GNU") in the
// bytes of a note section: namesz, descsz, type, then the name and the
// descriptor, each padded to 4 bytes.
func gnuBuildID(data []byte, bo binary.ByteOrder) (string, bool) {
	const ntGNUBuildID = 3
	for len(data) >= 12 {
		namesz, descsz, typ := bo.Uint32(data), bo.Uint32(data[4:]), bo.Uint32(data[8:])
		data = data[12:]
		nameEnd := (uint64(namesz) + 3) &^ 3
		descEnd := nameEnd + (uint64(descsz)+3)&^3
		if uint64(len(data)) < descEnd {
			return "", false
		}
		if typ == ntGNUBuildID && namesz == 4 && string(data[:3]) == "GNU" {
			return hex.EncodeToString(data[nameEnd : nameEnd+uint64(descsz)]), true
		}
		data = data[descEnd:]
	}
	return "", false
}
