package push

import (
	"context"

	"google.golang.org/protobuf/encoding/protowire"
)

// pyroscopeClient pushes through Pyroscope's connect API: POST of a
// protobuf push.v1.PushRequest to /push.v1.PusherService/Push.
type pyroscopeClient struct{ h *httpClient }

// PyroscopePushPath is the push method's path under the server URL.
const PyroscopePushPath = "/push.v1.PusherService/Push"

func (c *pyroscopeClient) send(ctx context.Context, it *item) error {
	labels := seriesLabels(c.h.cfg.Labels, it.name, it.probe)
	labels = append(labels, Label{"__delta__", "false"})
	return c.h.post(ctx, PyroscopePushPath, "application/proto", pushRequest(labels, it.body))
}

// Field numbers of push/v1/push.proto and types/v1/types.proto.
const (
	pushRequestSeries   = 1 // PushRequest.series: repeated RawProfileSeries
	seriesLabelsField   = 1 // RawProfileSeries.labels: repeated types.v1.LabelPair
	seriesSamples       = 2 // RawProfileSeries.samples: repeated RawSample
	rawSampleRawProfile = 1 // RawSample.raw_profile: bytes
	labelPairName       = 1 // LabelPair.name
	labelPairValue      = 2 // LabelPair.value
)

// pushRequest encodes a PushRequest with one series of one sample.
func pushRequest(labels []Label, profile []byte) []byte {
	var series []byte
	for _, l := range labels {
		var lp []byte
		lp = protowire.AppendTag(lp, labelPairName, protowire.BytesType)
		lp = protowire.AppendString(lp, l.Name)
		lp = protowire.AppendTag(lp, labelPairValue, protowire.BytesType)
		lp = protowire.AppendString(lp, l.Value)
		series = protowire.AppendTag(series, seriesLabelsField, protowire.BytesType)
		series = protowire.AppendBytes(series, lp)
	}
	var sample []byte
	sample = protowire.AppendTag(sample, rawSampleRawProfile, protowire.BytesType)
	sample = protowire.AppendBytes(sample, profile)
	series = protowire.AppendTag(series, seriesSamples, protowire.BytesType)
	series = protowire.AppendBytes(series, sample)
	var req []byte
	req = protowire.AppendTag(req, pushRequestSeries, protowire.BytesType)
	return protowire.AppendBytes(req, series)
}
