"""Cluster API node bootstrap: drop-ins and ``export`` lines for the nodes kubeadm sets up.

- ``kubeadm``: the planner for KubeadmConfigSpecs (KubeadmControlPlane, KubeadmConfig
  and their templates), its settings and the Secret layout of Secret mode;
- ``clusterclass``: the planner for ClusterClass patches that set the kubeadm lists;
- ``quoting``: systemd unit values, shell lines and PowerShell strings, escaped exactly;
- ``nodeos``: the one rule that tells a Windows spec (or patch value) from a Linux one;
- ``formats``: the bootstrap formats the tool writes for (a refusal for any other);
- ``uncovered``: bootstrap kinds no row of the target table covers, warned about;
- ``owners`` and ``shell``: who else in the stream sets the nodes' proxy, and which
  variables a shell command assigns.

May import: structs, errors, redact, objects, yamltext, noproxy, targets, record, plans.
"""
