"""Cluster API node bootstrap: drop-ins and ``export`` lines for the nodes kubeadm sets up.

- ``kubeadm``: the planner for KubeadmConfigSpecs (KubeadmControlPlane, KubeadmConfig
  and their templates), its settings and the Secret layout of Secret mode;
- ``clusterclass``: the planner for ClusterClass patches that set the kubeadm lists;
- ``quoting``: systemd unit values, shell lines and PowerShell strings, escaped exactly.

May import: structs, errors, redact, objects, yamltext, noproxy, targets, record, plans.
"""
