// Prints, for each URL argument, whether Go's net/http would send the request
// through the proxy that the environment names ("proxy") or go direct ("direct").
package main

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
)

func main() {
	for _, arg := range os.Args[1:] {
		target, err := url.Parse(arg)
		if err != nil {
			fmt.Println("error")
			continue
		}
		proxy, err := http.ProxyFromEnvironment(&http.Request{URL: target})
		switch {
		case err != nil:
			fmt.Println("error")
		case proxy == nil:
			fmt.Println("direct")
		default:
			fmt.Println("proxy")
		}
	}
}
