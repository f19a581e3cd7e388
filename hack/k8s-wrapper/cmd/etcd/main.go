// Command etcd is etcd's server built from go.etcd.io/etcd/server/v3: that
// module carries replace directives, so it cannot be `go install`ed directly.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
