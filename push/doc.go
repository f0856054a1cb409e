// Package push streams probee's profiles to a continuous-profiling backend
// while tracing: Grafana Pyroscope (push.v1.PusherService/Push) or Parca
// (ProfileStoreService/WriteRaw). It owns what an agent needs so that it
// never loses data silently:
//
//   - Delta: a run's profile is cumulative (the kernel's counts only grow);
//     Delta turns successive cumulative profiles into the counts that are
//     new since the last one, so each interval is pushed once.
//   - Pusher: one pprof per probe and interval (written by
//     output.WritePprof; there is no second encoder), a queue bounded in
//     profiles and in encoded bytes (oldest dropped first), a
//     sender that retries with exponential backoff, counts of what was sent,
//     retried and dropped (profiles and the events in them, per probe), and
//     Close, which flushes what waits within a timeout.
//   - Endpoint: the backend, its URL, labels and credentials, parsed and
//     checked up front (ParseEndpoint, ParseLabel).
//
// # Labels and profile names
//
// Every series carries service_name, hostname, probe (the probe label: the
// spec as given, or "sample"), the --label pairs, and __name__: process_cpu
// for --sample (the name both backends know for CPU profiles), probee_hits
// for probe hits, probee_latency for --latency, probee_weight for
// --weight, probee_off_cpu for --off-cpu and probee_wall for --wall; each
// probe's profile has its own probe's name and sample types. The pprof
// sample types say the rest (samples/count and cpu/nanoseconds,
// hits/count, calls/count and time/nanoseconds or ARG/UNIT, blocks/count
// and off_cpu/nanoseconds, wall/cpu/off_cpu nanoseconds). Pyroscope also gets __delta__="false": the profiles are
// deltas already.
//
// # Why the wire formats are written here
//
// Grafana publishes the Pyroscope API as a Go module
// (github.com/grafana/pyroscope/api), but its push package links gRPC,
// gnostic and vtprotobuf: a program using it measured 19.7 MB against
// 2.5 MB for the same program encoding the request with protowire. The
// request is three small messages (PushRequest, RawProfileSeries,
// RawSample with a LabelPair list), so they are encoded here with
// google.golang.org/protobuf/encoding/protowire, field numbers from
// Pyroscope's push.proto and types.proto. Parca's Go API lives inside the
// parca module itself (gRPC, gateway, arrow); its WriteRaw method is also
// served as JSON over HTTP by its gRPC gateway at POST
// /api/profiles/writeraw, which encoding/json covers.
package push
