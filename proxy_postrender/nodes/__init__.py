"""Cluster API node bootstrap: drop-ins and ``export`` lines for the nodes of each
bootstrap dialect (kubeadm, EKS, RKE2, K3s: the rows of proxy_postrender/dialects.py).

- ``kubeadm``: the planner for the bootstrap specs of every dialect row (kubeadm's
  KubeadmControlPlane, KubeadmConfig and their templates; EKSConfig, NodeadmConfig and
  their templates), its settings and the Secret layout of Secret mode;
- ``unitenv``: the entries of a row whose distribution reads its own unit env file
  (RKE2, K3s: ``/etc/default/...`` and exports in place of systemd drop-ins);
- ``writers``: the registry of writers a row names ("file list", "command prefix";
  "field setter", "config patch", "env list" declared for providers to come);
- ``clusterclass``: the planner for ClusterClass patches that set the bootstrap lists;
- ``quoting``: systemd unit values, shell lines and PowerShell strings, escaped exactly;
- ``nodeos``: the one rule that tells a Windows spec (or patch value) from a Linux one;
- ``formats``: the bootstrap formats the tool writes for (a refusal for any other);
- ``uncovered``: bootstrap kinds no row of the target table covers, warned about;
- ``owners`` and ``shell``: who else in the stream sets the nodes' proxy, and which
  variables a shell command assigns (``watched``: its codes and the kinds and groups it
  reads, for the engine and the result without it);
- ``settings``: the profile's node settings (``spec.nodes``), which the profile and the
  request read without the planners (imported on the first node object);
- ``digest``: the digest of the content the tool owns, for renamed templates and node
  Secrets (rollout/); ``rollouttime``: the rollout time (spec.nodes.rolloutAfter).

May import: structs, patterns, sre_programs, errors, redact, objects, dialects,
yamltext, noproxy, targets, record, plans.
"""
