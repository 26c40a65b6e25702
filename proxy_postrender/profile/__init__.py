"""The ProxyProfile: its option tables, validation, loading, and the request it makes.

- ``options``: the words the option tables are written in (Option, Section, kinds);
- ``tables``: the option tables, one per section: each field's kind, default, meaning;
- ``check``: the generic validator that reads a section against its table;
- ``rules``: the cross-field rules that no single field's check can state;
- ``build``: checked sections into the settings records (NodeSettings, ...);
- ``records``: Profile, Credentials and the command-line Overrides;
- ``loader``: read a profile from a file, a KRM functionConfig or flags, and assemble
  it section by section (spec.targets is parsed there by hand);
- ``schema``: the JSON Schema generated from the tables (and the shipped copy);
- ``reference``: docs/profile.md's field reference generated from the tables;
- ``request``: the run's Request from a loaded profile;
- ``fleet``: the per-cluster entries (``spec.clusters``), each a whole profile.

May import: structs, patterns, sre_programs, errors, redact, objects, dialects,
yamltext, noproxy, targets, record, plans, pods, nodes, fields, rollout, request,
result, resolve, planners, generated, verify, engine.
"""
