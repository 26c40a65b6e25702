// Prints, for each proxy URL on stdin, the proxy that Go's net/http takes from
// HTTPS_PROXY for a request to https://example.com.
//
// Input: one URL per line, hex-encoded (a URL may hold any byte). Output: one
// line per URL, "none" (no proxy), "error" (ProxyFromEnvironment refuses it),
// or "proxy SCHEME USER HASPASSWORD PASSWORD HOST PORT" with every text field
// hex-encoded after an "x" (so that an empty field is still a field). net/http reads the environment once per process, so each URL
// is looked up by a child process of this program ("-child"), with the URL in
// its environment.
package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
)

func child() {
	target, _ := url.Parse("https://example.com/")
	proxy, err := http.ProxyFromEnvironment(&http.Request{URL: target})
	switch {
	case err != nil:
		fmt.Println("error")
	case proxy == nil:
		fmt.Println("none")
	default:
		password, set := proxy.User.Password()
		fmt.Println("proxy", field(proxy.Scheme), field(proxy.User.Username()), set,
			field(password), field(proxy.Hostname()), field(proxy.Port()))
	}
}

func field(text string) string {
	return "x" + hex.EncodeToString([]byte(text))
}

func environment(proxy string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		name := strings.ToUpper(strings.SplitN(kv, "=", 2)[0])
		if !strings.HasSuffix(name, "_PROXY") && name != "REQUEST_METHOD" {
			env = append(env, kv)
		}
	}
	return append(env, "HTTPS_PROXY="+proxy)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-child" {
		child()
		return
	}
	self, err := os.Executable()
	if err != nil {
		panic(err)
	}
	var urls []string
	lines := bufio.NewScanner(os.Stdin)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	for lines.Scan() {
		raw, err := hex.DecodeString(strings.TrimSpace(lines.Text()))
		if err != nil {
			panic(err)
		}
		urls = append(urls, string(raw))
	}
	// the children run a few at a time; their answers are printed in input order
	answers := make([]string, len(urls))
	slots := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, proxy := range urls {
		wg.Add(1)
		slots <- struct{}{}
		go func(i int, proxy string) {
			defer wg.Done()
			defer func() { <-slots }()
			cmd := exec.Command(self, "-child")
			cmd.Env = environment(proxy)
			out, err := cmd.Output()
			if err != nil {
				panic(err)
			}
			answers[i] = string(out)
		}(i, proxy)
	}
	wg.Wait()
	for _, answer := range answers {
		fmt.Print(answer)
	}
}
