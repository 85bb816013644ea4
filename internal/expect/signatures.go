package expect

import (
	_ "embed"
	"fmt"
	"regexp"
	"sync"

	"gopkg.in/yaml.v3"
)

//go:embed signatures.yaml
var signatureData []byte

// Signature is one error message shape: what it means on DGX Spark and on
// GPU servers, what to do, and where that comes from.
type Signature struct {
	ID            string   `yaml:"id" json:"id"`
	Title         string   `yaml:"title" json:"title"`
	Kind          string   `yaml:"kind" json:"kind"`
	Match         []string `yaml:"match" json:"match"`
	Weight        float64  `yaml:"weight" json:"weight"`
	Severity      string   `yaml:"severity" json:"severity"` // warn or fail
	MeaningSpark  string   `yaml:"meaning_spark" json:"meaning_spark"`
	MeaningServer string   `yaml:"meaning_server" json:"meaning_server"`
	Fix           string   `yaml:"fix" json:"fix"`
	Sources       []string `yaml:"sources" json:"sources"`
	// Res is Match compiled.
	Res []*regexp.Regexp `yaml:"-" json:"-"`
}

// Meaning is what the message means on the platform ("dgx-spark" or any
// other, including unknown).
func (s *Signature) Meaning(platform string) string {
	if platform == "dgx-spark" {
		return s.MeaningSpark
	}
	return s.MeaningServer
}

var signatures = sync.OnceValues(func() ([]Signature, error) { return ParseSignatures(signatureData) })

// Signatures returns the embedded error signatures (an error is a defect of
// the data file, which the tests read).
func Signatures() ([]Signature, error) { return signatures() }

// ParseSignatures reads a signature catalogue and checks every entry.
func ParseSignatures(data []byte) ([]Signature, error) {
	var doc struct {
		Signatures []Signature `yaml:"signatures"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("signatures.yaml: %w", err)
	}
	seen := map[string]bool{}
	for i := range doc.Signatures {
		s := &doc.Signatures[i]
		if s.ID == "" || s.Title == "" || len(s.Match) == 0 || s.MeaningSpark == "" || s.MeaningServer == "" || s.Fix == "" ||
			len(s.Sources) == 0 || s.Weight <= 0 || (s.Severity != "warn" && s.Severity != "fail") {
			return nil, fmt.Errorf("signatures.yaml: entry %d (%q) lacks an id, title, match, meaning, fix, source, weight or severity", i, s.ID)
		}
		if seen[s.ID] {
			return nil, fmt.Errorf("signatures.yaml: %s: duplicate id", s.ID)
		}
		seen[s.ID] = true
		for _, m := range s.Match {
			re, err := regexp.Compile(m)
			if err != nil {
				return nil, fmt.Errorf("signatures.yaml: %s: %w", s.ID, err)
			}
			s.Res = append(s.Res, re)
		}
	}
	return doc.Signatures, nil
}
