"""The stream as text: everything that reads or writes YAML, and nothing about Kubernetes.

- ``stream``: split a multi-document stream into segments that keep their raw text;
- ``read``: read a segment into a node tree with positions and plain data (the
  fast ``blockread`` reader, else ``libyaml``); ``errors``: why a text is not YAML,
  and the bounds on what one document may cost (nesting, nodes);
- ``tree``: the node tree the splicer edits;
- ``ops``: edits as operations on paths, and applying them to data;
- ``splice``: carry operations out as text edits; ``scalars``: YAML scalars that
  read back exactly; ``libyaml``: the C parser and the round-trip fallback dump;
  ``loader``: the safe loader both readers resolve scalars with;
- ``check``: prove a splice right from its edits and what it inserted (the
  verification step's cheap path; what it cannot prove is read back in full);
- ``spool``: the output held until the run has succeeded.

May import: structs, patterns, sre_programs, errors, redact, objects, dialects.
"""
