package push

import (
	"strings"
	"testing"
)

func TestParseLabel(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Label
		err  string
	}{
		{"env=prod", Label{"env", "prod"}, ""},
		{"_x9=a=b", Label{"_x9", "a=b"}, ""},
		{"region=eu west", Label{"region", "eu west"}, ""},
		{"env", Label{}, "want NAME=VALUE"},
		{"=v", Label{}, "name \"\""},
		{"9a=v", Label{}, "not starting with a digit"},
		{"a-b=v", Label{}, "want letters"},
		{"é=v", Label{}, "want letters"},
		{"__name__=x", Label{}, "reserved"},
		{"service_name=x", Label{}, "--service-name"},
		{"hostname=x", Label{}, "sets hostname itself"},
		{"probe=x", Label{}, "sets probe itself"},
		{"env=", Label{}, "empty value"},
	} {
		got, err := ParseLabel(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseLabel(%q) = %v, %v; want error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseLabel(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestCheckLabels(t *testing.T) {
	if err := CheckLabels([]Label{{"a", "1"}, {"b", "2"}}); err != nil {
		t.Error(err)
	}
	if err := CheckLabels([]Label{{"a", "1"}, {"a", "2"}}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate: %v", err)
	}
}

func TestSeriesLabelsSorted(t *testing.T) {
	got := seriesLabels([]Label{{"service_name", "app"}, {"env", "prod"}, {"hostname", "h"}}, "probee_hits", "libc:malloc")
	want := "__name__=probee_hits env=prod hostname=h probe=libc:malloc service_name=app"
	var parts []string
	for _, l := range got {
		parts = append(parts, l.Name+"="+l.Value)
	}
	if s := strings.Join(parts, " "); s != want {
		t.Errorf("seriesLabels = %s, want %s", s, want)
	}
}

func FuzzParseLabel(f *testing.F) {
	for _, s := range []string{"env=prod", "a==", "__x=1", "=", "9=9", "k=\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLabel(s)
		if err != nil {
			return
		}
		if !validName(l.Name) || strings.HasPrefix(l.Name, "__") || l.Value == "" || l.Name+"="+l.Value != s {
			t.Fatalf("ParseLabel(%q) = %+v", s, l)
		}
	})
}
