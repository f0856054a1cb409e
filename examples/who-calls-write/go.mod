// A module of its own, so the example is not part of probee's ./...
module example.com/svc

go 1.22
