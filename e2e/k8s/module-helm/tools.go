//go:build tools

// The command e2e/k8s/build.sh builds from this module. Never compiled (the
// "tools" tag is never set): the import keeps every module helm needs in
// go.mod and go.sum, so `go mod tidy` does not drop them and a
// -mod=readonly build finds every checksum here, committed.
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
)
