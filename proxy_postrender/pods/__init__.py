"""Workloads: env vars into the containers of every pod template.

- ``workloads``: the planner (pure data in, operations out) and its ownership record;
- ``selection``: which objects and containers are chosen (``spec.workloads``, opt-out
  annotations) and the proxy CA mount;
- ``java``: JAVA_TOOL_OPTIONS for JVMs.

May import: structs, patterns, sre_programs, errors, redact, objects, dialects,
yamltext, noproxy, targets, record, plans.
"""
