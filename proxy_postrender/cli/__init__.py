"""The entry points: thin shells over the engine.

- ``entry``: the console script (plain filter invocations are read without click);
- ``options``: the main command's options, as a table;
- ``runner``: the filter run (stdin to stdout, all or nothing), messages and logs;
- ``diff``: ``--diff``: the masked second run and the hunks, document by document;
- ``report``: the ``--report`` summary; ``krm``: the KRM function (a ResourceList in
  and out); ``patches``: the change as kustomize patches for Flux;
- ``table``: the subcommand table (words, modules, summaries; no click); ``start``:
  starting the filter; ``commands``: the click commands, one module per subcommand.

May import: structs, patterns, sre_programs, errors, redact, objects, dialects,
yamltext, noproxy, targets, record, plans, pods, nodes, fields, rollout, request,
result, resolve, planners, generated, verify, engine, profile.
"""
