package push

import (
	"context"
	"encoding/json"
)

// parcaClient writes through Parca's gRPC gateway: POST of a JSON
// parca.profilestore.v1alpha1.WriteRawRequest to /api/profiles/writeraw.
type parcaClient struct{ h *httpClient }

// ParcaWritePath is WriteRaw's HTTP path under the server URL.
const ParcaWritePath = "/api/profiles/writeraw"

type parcaWriteRaw struct {
	Series     []parcaSeries `json:"series"`
	Normalized bool          `json:"normalized"`
}

type parcaSeries struct {
	Labels  parcaLabelSet `json:"labels"`
	Samples []parcaSample `json:"samples"`
}

type parcaLabelSet struct {
	Labels []parcaLabel `json:"labels"`
}

type parcaLabel struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type parcaSample struct {
	RawProfile []byte `json:"rawProfile"` // base64, as protojson wants bytes
}

func (c *parcaClient) send(ctx context.Context, it *item) error {
	req := parcaWriteRaw{Series: []parcaSeries{{Samples: []parcaSample{{RawProfile: it.body}}}}}
	for _, l := range seriesLabels(c.h.cfg.Labels, it.name, it.probe) {
		req.Series[0].Labels.Labels = append(req.Series[0].Labels.Labels, parcaLabel(l))
	}
	body, err := json.Marshal(req)
	if err != nil {
		return &rejectedError{0, err.Error()}
	}
	return c.h.post(ctx, ParcaWritePath, "application/json", body)
}
