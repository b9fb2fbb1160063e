// gaigo NAME: Go's own resolver (net.Resolver{PreferGo: true}, which reads
// /etc/resolv.conf: search list, ndots, its own timeouts) looks NAME up,
// for e2e/dnsquery.sh. Standard library only. Prints "ok MS ms ADDR..." or
// "fail MS ms REASON"; exit 0 / 1.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gaigo NAME")
		os.Exit(2)
	}
	r := &net.Resolver{PreferGo: true}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	t0 := time.Now()
	addrs, err := r.LookupHost(ctx, os.Args[1])
	ms := float64(time.Since(t0).Microseconds()) / 1000
	if err != nil {
		fmt.Printf("fail %.1f ms %v\n", ms, err)
		os.Exit(1)
	}
	fmt.Printf("ok %.1f ms %s\n", ms, strings.Join(addrs, " "))
}
