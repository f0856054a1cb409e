module github.com/probee/probee

go 1.26.0

require (
	github.com/alecthomas/participle/v2 v2.1.4
	github.com/cilium/ebpf v0.22.0
	github.com/gobwas/glob v1.1.0
	github.com/google/pprof v0.0.0-20261016150608-1facf8f91b50
	github.com/hanwen/go-fuse/v2 v2.12.1
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724
	golang.org/x/arch v0.32.0
	golang.org/x/sys v0.43.0
	google.golang.org/protobuf v1.36.11
)

require github.com/alecthomas/repr v0.5.2 // indirect

tool github.com/cilium/ebpf/cmd/bpf2go
