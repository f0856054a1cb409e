package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// Profile type ids of probee's profiles, as the backends name them
// (__name__:sample type:unit:period type:period unit; see push/doc.go).
const (
	typeHits    = "probee_hits:hits:count:hits:count"
	typeSamples = "process_cpu:samples:count:cpu:nanoseconds"
	typeLatency = "probee_latency:time:nanoseconds:time:nanoseconds"
)

// selector is a label selector for one probe of one service, with the
// labels every push run sets (pushArgs): the host name and run="e2e".
func selector(service, probe string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf(`{service_name=%s,probe=%s,hostname=%s,run="e2e"}`,
		strconv.Quote(service), strconv.Quote(probe), strconv.Quote(host))
}

// postJSON posts req as JSON to url, as tenant when not "", and decodes
// the answer into resp.
func postJSON(url, tenant string, req, resp any) error {
	body, _ := json.Marshal(req)
	hr, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hr.Header.Set("Content-Type", "application/json")
	if tenant != "" {
		hr.Header.Set("X-Scope-OrgID", tenant)
	}
	r, err := http.DefaultClient.Do(hr)
	if err != nil {
		return err
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 {
		return fmt.Errorf("%s: %s: %s", url, r.Status, b)
	}
	return json.Unmarshal(b, resp)
}

// int64s decodes protojson int64 lists (numbers written as strings).
type int64s []int64

func (v *int64s) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for _, r := range raw {
		n, err := strconv.ParseInt(strings.Trim(string(r), `"`), 10, 64)
		if err != nil {
			return err
		}
		*v = append(*v, n)
	}
	return nil
}

type flamegraph struct {
	Names  []string `json:"names"`
	Levels []struct {
		Values int64s `json:"values"`
	} `json:"levels"`
}

// pyroscopeStacks queries Pyroscope's SelectMergeStacktraces and returns
// the merged stacks (root;...;leaf -> total) from its flame graph.
func pyroscopeStacks(s *server, profileType, sel string, from, to time.Time) (map[string]uint64, error) {
	return pyroscopeTenantStacks(s, "", profileType, sel, from, to)
}

// pyroscopeTenantStacks is pyroscopeStacks as a tenant (X-Scope-OrgID).
func pyroscopeTenantStacks(s *server, tenant, profileType, sel string, from, to time.Time) (map[string]uint64, error) {
	req := map[string]any{"profileTypeID": profileType, "labelSelector": sel,
		"start": from.UnixMilli(), "end": to.UnixMilli(), "maxNodes": 1 << 20}
	var resp struct {
		Flamegraph flamegraph `json:"flamegraph"`
	}
	if err := postJSON(s.url()+"/querier.v1.QuerierService/SelectMergeStacktraces", tenant, req, &resp); err != nil {
		return nil, err
	}
	return resp.Flamegraph.stacks()
}

// stacks decodes the flame graph levels: each node is 4 values, the
// x offset from the end of the node before it on its level, total, self
// and name index; a node's parent is the node above that spans its x.
// Level 0 is the root ("total"), left out of the stacks.
func (fg flamegraph) stacks() (map[string]uint64, error) {
	type node struct {
		x, total int64
		path     string
	}
	out := map[string]uint64{}
	var above []node
	for depth, lv := range fg.Levels {
		v := lv.Values
		if len(v)%4 != 0 {
			return nil, fmt.Errorf("level %d: %d values", depth, len(v))
		}
		var cur []node
		x, p := int64(0), 0
		for i := 0; i < len(v); i += 4 {
			x += v[i]
			n := node{x: x, total: v[i+1]}
			if depth > 0 {
				for p < len(above) && above[p].x+above[p].total <= x {
					p++
				}
				if p == len(above) || int(v[i+3]) >= len(fg.Names) {
					return nil, fmt.Errorf("level %d: node at %d has no parent", depth, x)
				}
				n.path = strings.TrimPrefix(above[p].path+";"+fg.Names[v[i+3]], ";")
				if v[i+2] > 0 {
					out[n.path] += uint64(v[i+2])
				}
			}
			cur = append(cur, n)
			x += v[i+1]
		}
		above = cur
	}
	return out, nil
}

// parcaStacks queries Parca's merged profile of a selector as pprof and
// folds it into root;...;leaf -> total of the first sample type. Parca
// keeps profiles with a duration (probee's deltas) as the profile type
// with the suffix ":delta".
func parcaStacks(s *server, profileType, sel string, from, to time.Time) (map[string]uint64, error) {
	q := url.Values{"mode": {"MODE_MERGE"}, "reportType": {"REPORT_TYPE_PPROF"},
		"merge.query": {profileType + ":delta" + sel}, "merge.start": {from.UTC().Format(time.RFC3339Nano)},
		"merge.end": {to.UTC().Format(time.RFC3339Nano)}}
	r, err := http.Get(s.url() + "/api/profiles/query?" + q.Encode())
	if err != nil {
		return nil, err
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 {
		return nil, fmt.Errorf("parca query: %s: %s", r.Status, b)
	}
	var resp struct {
		Pprof []byte `json:"pprof"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		return nil, err
	}
	p, err := profile.ParseData(resp.Pprof)
	if err != nil {
		return nil, fmt.Errorf("parca pprof: %w", err)
	}
	return foldProfile(p), nil
}

// foldProfile folds a pprof profile's stacks (function names, inline
// lines innermost first within a location) into root;...;leaf -> value.
func foldProfile(p *profile.Profile) map[string]uint64 {
	out := map[string]uint64{}
	for _, s := range p.Sample {
		var frames []string
		for _, loc := range slices.Backward(s.Location) {
			for _, ln := range slices.Backward(loc.Line) {
				frames = append(frames, ln.Function.Name)
			}
		}
		if s.Value[0] > 0 {
			out[strings.Join(frames, ";")] += uint64(s.Value[0])
		}
	}
	return out
}
