"""NO_PROXY: what goes into it, for which scope, and how each client reads it.

- ``syntax``: parse, validate, normalise, join and merge entries;
- ``presets``: loopback, Kubernetes names, cloud metadata (and the infrastructure
  kinds that pick a cloud);
- ``scope``: the merged, annotated list of one scope (the workloads, or the nodes of
  one cluster); ``environments``: the variables each object gets;
- ``discovery``: the Cluster API clusters of a stream and which objects serve which
  (``clusterindex``: the index it fills, which a stream without a Cluster API group
  gets empty without it);
- ``bootstraps``: what each cluster's nodes bootstrap from (the references, any kind);
- ``clients``: models of Go, curl, Python and wget; ``explain``: what
  ``proxy-postrender noproxy`` prints; ``advice``: classic mistakes, as warnings.

May import: structs, patterns, sre_programs, errors, redact, objects, dialects,
yamltext.
"""
