// Fetches each URL argument with Go's default client (http.DefaultTransport, whose
// Proxy is http.ProxyFromEnvironment: HTTP_PROXY, HTTPS_PROXY, NO_PROXY, read once per
// process), printing the status or the error. tests/squidlab.py watches where the
// requests went.
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

func main() {
	client := &http.Client{Timeout: 5 * time.Second}
	for _, arg := range os.Args[1:] {
		resp, err := client.Get(arg)
		if err != nil {
			fmt.Println(arg, "error:", err)
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Println(arg, resp.StatusCode)
	}
}
