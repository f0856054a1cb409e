package editdist

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"uprobe", "uprobe", 0}, {"uprbe", "uprobe", 1}, {"uprob", "uprobe", 1},
		{"samples", "sample", 1}, {"uprboe", "uprobe", 1}, {"kprobe", "uprobe", 1}, {"", "abc", 3}, {"abc", "xyz", 3},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestNearest(t *testing.T) {
	words := []string{"uprobe", "uretprobe", "kprobe", "usdt"}
	for _, c := range []struct {
		w    string
		max  int
		want string
	}{
		{"uprob", 2, "uprobe"}, {"kprob", 2, "kprobe"}, {"zzzzzz", 2, ""}, {"usd", 1, "usdt"},
	} {
		if got := Nearest(c.w, words, c.max); got != c.want {
			t.Errorf("Nearest(%q, %d) = %q, want %q", c.w, c.max, got, c.want)
		}
	}
}
