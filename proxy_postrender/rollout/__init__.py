"""Rollout: a change of the tool's node bootstrap content reaches the running machines.

Cluster API replaces a MachineDeployment's machines when a *reference* of its
machine template changes, never when the content of the referenced bootstrap
template does (FACTS.md, "Rollouts"). So the tool renames a worker bootstrap
template whose content it owns, ``<name>-<digest of that content>``, and moves
every reference of the stream with it:

- ``references``: who refers to a bootstrap template, and where (FieldSpecs as
  data, one row per referrer kind and shape);
- ``ledger``: the pass before the main one that finds the references of the
  stream and the names its templates get (the digest of the content the tool owns:
  nodes/digest.py), and moves the references in the main pass, with the rollout
  time of MachineDeployments (``spec.nodes.rolloutAfter``: nodes/rollouttime.py,
  which writes it into the control planes too);
- ``effects``: what will roll, said per changed node object in ``--report``
  and KRM results (``nodes/no-rollout`` when nothing will; ``codes``: that code,
  for the table of codes to read at start-up).

May import: structs, patterns, sre_programs, errors, redact, objects, dialects,
yamltext, noproxy, targets, record, plans, pods, nodes, fields.
"""
