"""Field setters: fields of other kinds (add-on configuration objects) set from profile values.

- ``setters``: the planner, its settings and its ownership record.

May import: structs, patterns, sre_programs, errors, redact, objects, dialects,
yamltext, noproxy, targets, record, plans.
"""
