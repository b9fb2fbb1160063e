//go:build tools

// The commands e2e/k8s/build.sh builds. This file is never compiled (the
// "tools" tag is never set): its imports keep every module those commands
// need in go.mod and go.sum, so `go mod tidy` does not drop them and a
// -mod=readonly build finds every checksum here, committed.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
