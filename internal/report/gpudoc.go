package report

import (
	"bytes"
	"encoding/json"
)

// GPU benchmark outputs written before `bench gpu memory` and `bench gpu
// info` wrote report documents: memory's copies as a bare JSON array,
// info's stack as a bare object. Their fields are GPUCopy's and GPUInfo's.

// LooksLikeGPUOutput says whether t (the start of a JSON input) is one of
// those bare outputs: an array whose objects hold "gbs" and "method", or an
// object with "libraries" and "devices" and no "tool".
func LooksLikeGPUOutput(t []byte) bool {
	t = bytes.TrimLeft(t, " \t\r\n\ufeff")
	switch {
	case len(t) == 0:
		return false
	case t[0] == '[':
		return bytes.Contains(t, []byte(`"gbs"`)) && bytes.Contains(t, []byte(`"method"`))
	case t[0] == '{':
		return bytes.Contains(t, []byte(`"libraries"`)) && bytes.Contains(t, []byte(`"devices"`)) && !bytes.Contains(t, []byte(`"tool"`))
	}
	return false
}

// DecodeGPUOutput reads a bare `bench gpu memory` or `bench gpu info`
// output as the document the command writes now (ok false when data is
// neither).
func DecodeGPUOutput(data []byte) (*Report, bool) {
	if !LooksLikeGPUOutput(data) {
		return nil, false
	}
	t := bytes.TrimLeft(data, " \t\r\n\ufeff")
	r := &Report{Schema: SchemaVersion, Tool: "sparkrig", Hosts: []Host{}}
	if t[0] == '[' {
		var copies []GPUCopy
		if json.Unmarshal(t, &copies) != nil || len(copies) == 0 {
			return nil, false
		}
		for i, c := range copies {
			if c.Name == "" || c.GBs <= 0 {
				return nil, false
			}
			copies[i].Size = HumanBytes(c.Bytes)
		}
		r.Command, r.GPU = "bench gpu memory", &GPU{Copies: copies}
	} else {
		var info GPUInfo
		if json.Unmarshal(t, &info) != nil || len(info.Devices) == 0 && info.Driver == "" {
			return nil, false
		}
		for i, d := range info.Devices {
			info.Devices[i].SMArch = SMArch(d.Capability)
			info.Devices[i].MemFree, info.Devices[i].MemTotal = HumanBytes(int64(d.MemFreeBytes)), HumanBytes(int64(d.MemTotalBytes))
		}
		r.Command, r.GPU = "bench gpu info", &GPU{Info: &info}
	}
	r.Status = r.Overall()
	return r, true
}
