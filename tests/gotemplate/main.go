// Render a Cluster API patch template as the topology controller does
// (core/reconcilers/topology/cluster/patches/inline/json_patch_generator.go,
// renderValueTemplate): Go's text/template, no missingkey option, the variables as
// one nested map. Sprig's functions are not added: the tool's templates use the
// built-ins only, and a call to anything else must fail here.
//
// Usage: gotemplate TEMPLATE-FILE VARIABLES-JSON-FILE; prints the rendered text.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"text/template"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gotemplate TEMPLATE VARIABLES.json")
		os.Exit(2)
	}
	text, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	raw, err := os.ReadFile(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var data map[string]interface{}
	if err := json.Unmarshal(raw, &data); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	tpl, err := template.New("tpl").Parse(string(text))
	if err != nil {
		fmt.Fprintln(os.Stderr, "parse:", err)
		os.Exit(1)
	}
	if err := tpl.Execute(os.Stdout, data); err != nil {
		fmt.Fprintln(os.Stderr, "execute:", err)
		os.Exit(1)
	}
}
