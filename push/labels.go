package push

import (
	"fmt"
	"slices"
	"strings"
)

// Label is one name=value pair of a profile series.
type Label struct{ Name, Value string }

// Names of the labels probee sets itself.
const (
	LabelName    = "__name__"
	LabelService = "service_name"
	LabelHost    = "hostname"
	LabelProbe   = "probe"
)

// ParseLabel parses one --label NAME=VALUE. NAME is a Prometheus label name
// ([a-zA-Z_][a-zA-Z0-9_]*) not starting with "__" and not one probee sets;
// VALUE is any non-empty text.
func ParseLabel(s string) (Label, error) {
	name, value, ok := strings.Cut(s, "=")
	if !ok {
		return Label{}, fmt.Errorf("label %q: want NAME=VALUE", s)
	}
	if !validName(name) {
		return Label{}, fmt.Errorf("label %q: name %q: want letters, digits and _, not starting with a digit", s, name)
	}
	switch {
	case strings.HasPrefix(name, "__"):
		return Label{}, fmt.Errorf("label %q: names starting with __ are reserved", s)
	case name == LabelService:
		return Label{}, fmt.Errorf("label %q: set the service name with --service-name", s)
	case name == LabelHost || name == LabelProbe:
		return Label{}, fmt.Errorf("label %q: probee sets %s itself", s, name)
	case value == "":
		return Label{}, fmt.Errorf("label %q: empty value", s)
	}
	return Label{Name: name, Value: value}, nil
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range []byte(s) {
		letter := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// CheckLabels rejects a name given twice.
func CheckLabels(ls []Label) error {
	seen := map[string]bool{}
	for _, l := range ls {
		if seen[l.Name] {
			return fmt.Errorf("label %s given twice", l.Name)
		}
		seen[l.Name] = true
	}
	return nil
}

// seriesLabels are the labels of one probe's series, sorted by name.
func seriesLabels(common []Label, name, probe string) []Label {
	out := append(slices.Clone(common), Label{LabelName, name}, Label{LabelProbe, probe})
	slices.SortFunc(out, func(a, b Label) int { return strings.Compare(a.Name, b.Name) })
	return out
}
