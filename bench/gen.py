"""Synthetic inputs for the benchmarks (``bench/run.py``, ``bench/profile.py``).

Charts (rendered by the real Helm in the benchmark; :func:`helm3` finds it for the
scripts that render them themselves, ``bench/coverage.py`` and ``bench/profile.py``):

- :func:`write_chart`: N Deployments, each with an init container and two
  containers, one of them with existing env entries (the workload-dense case);
- :func:`write_crd_chart`: large CustomResourceDefinitions, one template per
  CRD, schema-heavy like controller-gen output (the pass-through case);
- :func:`write_capi_chart`: Cluster API clusters (Cluster, DockerCluster,
  KubeadmControlPlane, DockerMachineTemplate, KubeadmConfigTemplate,
  MachineDeployment; v1beta1) with ``files`` and ``preKubeadmCommands``;
- :func:`write_tiny_chart`: one ConfigMap and one Deployment (cold start);
- :func:`write_flow_items_chart`: N Deployments with one container each, whose
  ports and env entries are flow mappings in a block sequence
  (``- {name: A, value: "1"}``), as many charts write them.

One flow-style document: :func:`write_flow_deployment` (a JSON Deployment of N bytes,
the case that cost minutes per MiB through the round-trip dump). Two ClusterClasses
(issue 27): :func:`clusterclass_wide_template` (a patch replacing a template's whole
spec from a Go template of many keys) and :func:`clusterclass_definitions` (many
patch definitions, one in eleven replacing both kubeadm lists).

Plain streams (no Helm involved), written piece by piece so that a 200 MB
stream never sits in memory: :func:`write_crd_stream`, :func:`write_stream`
(N documents, mostly Deployments plus ConfigMaps and Services, the scaling
curve) and :func:`write_stream_bytes` (the same mix up to a size).

Everything is deterministic: the same arguments give the same bytes.

Command line, for trying things by hand::

    python bench/gen.py stream OUT.yaml 10000
    python bench/gen.py stream-bytes OUT.yaml 200000000
    python bench/gen.py crds OUT.yaml 10000000
    python bench/gen.py flow OUT.yaml 1048576
    python bench/gen.py clusterclass-template|clusterclass-definitions OUT.yaml 1048576
    python bench/gen.py chart|flow-items-chart|crd-chart|capi-chart|tiny-chart DIR [N]
"""

from __future__ import annotations

import os
import random
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

ROOT = Path(__file__).resolve().parent.parent


def helm3() -> str | None:
    """The Helm 3 that renders the charts: $HELM3_BIN, .cache/tools/helm3/helm
    (``make helm``) or the first ``helm`` on PATH."""
    candidates = [os.environ.get("HELM3_BIN"), str(ROOT / ".cache" / "tools" / "helm3" / "helm")]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("helm")


# --------------------------------------------------------------------------- dense chart

CHART_YAML = "apiVersion: v2\nname: bench\nversion: 0.1.0\n"

DEPLOYMENTS = """{{- range $i := until (int .Values.count) }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-{{ $i }}
  labels:
    app.kubernetes.io/name: app-{{ $i }}
    app.kubernetes.io/instance: {{ $.Release.Name }}
spec:
  replicas: 2
  selector:
    matchLabels:
      app.kubernetes.io/name: app-{{ $i }}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: app-{{ $i }}
    spec:
      initContainers:
        - name: init
          image: "busybox:1.36"
          command: ["sh", "-c", "echo init"]
      containers:
        - name: app
          image: "registry.example.com/app:{{ $i }}"
          env:
            - name: LOG_LEVEL
              value: "info"
            - name: POD_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
          ports:
            - containerPort: 8080
          resources:
            limits:
              cpu: 500m
              memory: 256Mi
        - name: sidecar
          image: "registry.example.com/sidecar:1.0"
          args: ["--port", "9090"]
{{- end }}
"""


def _chart(directory: Path, name: str, values: str, templates: dict[str, str]) -> Path:
    (directory / "templates").mkdir(parents=True, exist_ok=True)
    (directory / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n")
    (directory / "values.yaml").write_text(values)
    for file_name, text in templates.items():
        (directory / "templates" / file_name).write_text(text)
    return directory


def write_chart(directory: Path, count: int) -> Path:
    """A chart rendering ``count`` Deployments (init container + two containers each)."""
    return _chart(directory, "bench", f"count: {count}\n", {"deployments.yaml": DEPLOYMENTS})


# --------------------------------------------------------------------------- flow-item chart

# Ports, env entries and volume mounts written as one flow mapping per sequence item,
# the way many charts template short entries, with plain and quoted values and nested
# flow mappings among them.
FLOW_ITEM_DEPLOYMENTS = """{{- range $i := until (int .Values.count) }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: svc-{{ $i }}
  labels: {app.kubernetes.io/name: svc-{{ $i }}, app.kubernetes.io/instance: {{ $.Release.Name }}}
spec:
  replicas: 1
  selector:
    matchLabels: {app.kubernetes.io/name: svc-{{ $i }}}
  template:
    metadata:
      labels: {app.kubernetes.io/name: svc-{{ $i }}}
      annotations: {prometheus.io/scrape: "true", prometheus.io/port: "9090"}
    spec:
      containers:
        - name: svc
          image: "registry.example.com/svc:{{ $i }}"
          args: [--port=8080, "--metrics-addr=:9090"]
          ports:
            - {name: http, containerPort: 8080, protocol: TCP}
            - {name: metrics, containerPort: 9090, protocol: TCP}
          env:
            - {name: LOG_LEVEL, value: "info"}
            - {name: WORKERS, value: "{{ add 1 (mod $i 4) }}"}
            - {name: REGION, value: eu-west-1}
            - {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
          volumeMounts:
            - {name: data, mountPath: /data}
            - {name: tmp, mountPath: /tmp, readOnly: false}
          resources:
            limits: {cpu: 250m, memory: 128Mi}
            requests: {cpu: 50m, memory: 64Mi}
      volumes:
        - {name: data, emptyDir: {}}
        - {name: tmp, emptyDir: {medium: Memory}}
{{- end }}
"""


def write_flow_items_chart(directory: Path, count: int) -> Path:
    """A chart rendering ``count`` Deployments of one container each, whose ports, env
    entries, mounts and volumes are flow mappings as block sequence items."""
    return _chart(
        directory, "flowitems", f"count: {count}\n", {"deployments.yaml": FLOW_ITEM_DEPLOYMENTS}
    )


# --------------------------------------------------------------------------- tiny chart

TINY_CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
  labels:
    app.kubernetes.io/name: tiny
data:
  greeting: {{ .Values.greeting | quote }}
"""

TINY_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
  labels:
    app.kubernetes.io/name: tiny
spec:
  replicas: 1
  selector:
    matchLabels:
      app.kubernetes.io/name: tiny
  template:
    metadata:
      labels:
        app.kubernetes.io/name: tiny
    spec:
      containers:
        - name: web
          image: {{ .Values.image | quote }}
          envFrom:
            - configMapRef:
                name: {{ .Release.Name }}-config
          ports:
            - containerPort: 8080
"""


def write_tiny_chart(directory: Path) -> Path:
    """One ConfigMap and one Deployment with one container."""
    return _chart(
        directory,
        "tiny",
        'greeting: "hello"\nimage: "registry.example.com/web:1.0"\n',
        {"configmap.yaml": TINY_CONFIGMAP, "deployment.yaml": TINY_DEPLOYMENT},
    )


# --------------------------------------------------------------------------- Cluster API chart

CAPI_TEMPLATE = """{{- range $i := until (int .Values.clusters) }}
{{- $name := printf "%s-%d" $.Values.prefix $i }}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: {{ $name }}
  namespace: {{ $.Values.namespace }}
  labels:
    cluster.x-k8s.io/cluster-name: {{ $name }}
    environment: bench
spec:
  clusterNetwork:
    pods:
      cidrBlocks:
        - 192.168.0.0/16
    services:
      cidrBlocks:
        - 10.128.0.0/12
    serviceDomain: cluster.local
  controlPlaneEndpoint:
    host: {{ $name }}.k8s.example.internal
    port: 6443
  controlPlaneRef:
    apiVersion: controlplane.cluster.x-k8s.io/v1beta1
    kind: KubeadmControlPlane
    name: {{ $name }}-control-plane
  infrastructureRef:
    apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
    kind: DockerCluster
    name: {{ $name }}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: DockerCluster
metadata:
  name: {{ $name }}
  namespace: {{ $.Values.namespace }}
spec:
  loadBalancer:
    customHAProxyConfigTemplateRef:
      name: {{ $name }}-lb-config
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: DockerMachineTemplate
metadata:
  name: {{ $name }}-control-plane
  namespace: {{ $.Values.namespace }}
spec:
  template:
    spec:
      extraMounts:
        - containerPath: /var/run/docker.sock
          hostPath: /var/run/docker.sock
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlane
metadata:
  name: {{ $name }}-control-plane
  namespace: {{ $.Values.namespace }}
  labels:
    cluster.x-k8s.io/cluster-name: {{ $name }}
spec:
  replicas: 3
  version: {{ $.Values.version }}
  machineTemplate:
    infrastructureRef:
      apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
      kind: DockerMachineTemplate
      name: {{ $name }}-control-plane
  kubeadmConfigSpec:
    clusterConfiguration:
      apiServer:
        certSANs:
          - localhost
          - 127.0.0.1
          - 0.0.0.0
          - host.docker.internal
        extraArgs:
          audit-log-maxage: "30"
          audit-log-path: /var/log/kubernetes/audit.log
          audit-policy-file: /etc/kubernetes/audit-policy.yaml
          profiling: "false"
        extraVolumes:
          - hostPath: /etc/kubernetes/audit-policy.yaml
            mountPath: /etc/kubernetes/audit-policy.yaml
            name: audit-policy
            pathType: File
            readOnly: true
      controllerManager:
        extraArgs:
          bind-address: 0.0.0.0
          profiling: "false"
      etcd:
        local:
          dataDir: /var/lib/etcddisk/etcd
          extraArgs:
            quota-backend-bytes: "8589934592"
      scheduler:
        extraArgs:
          bind-address: 0.0.0.0
    initConfiguration:
      nodeRegistration:
        criSocket: unix:///var/run/containerd/containerd.sock
        kubeletExtraArgs:
          eviction-hard: nodefs.available<0%,nodefs.inodesFree<0%,imagefs.available<0%
          protect-kernel-defaults: "true"
          tls-cipher-suites: TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
    joinConfiguration:
      nodeRegistration:
        criSocket: unix:///var/run/containerd/containerd.sock
        kubeletExtraArgs:
          eviction-hard: nodefs.available<0%,nodefs.inodesFree<0%,imagefs.available<0%
          protect-kernel-defaults: "true"
    files:
      - path: /etc/kubernetes/audit-policy.yaml
        owner: root:root
        permissions: "0600"
        content: |
          apiVersion: audit.k8s.io/v1
          kind: Policy
          rules:
            - level: None
              users: ["system:kube-proxy"]
              verbs: ["watch"]
              resources:
                - group: ""
                  resources: ["endpoints", "services", "services/status"]
            - level: Metadata
              resources:
                - group: ""
                  resources: ["secrets", "configmaps"]
            - level: RequestResponse
              omitStages: ["RequestReceived"]
      - path: /etc/sysctl.d/90-kubelet.conf
        owner: root:root
        permissions: "0644"
        content: |
          vm.overcommit_memory=1
          kernel.panic=10
          kernel.panic_on_oops=1
      - path: /usr/local/bin/wait-for-disk.sh
        owner: root:root
        permissions: "0755"
        content: |
          #!/bin/sh
          set -eu
          for i in $(seq 1 30); do
            if [ -b /dev/vdb ]; then exit 0; fi
            sleep 2
          done
          echo "data disk never appeared" >&2
          exit 1
    preKubeadmCommands:
      - /usr/local/bin/wait-for-disk.sh
      - mkdir -p /var/lib/etcddisk
      - sysctl --system
      - echo "127.0.0.1 {{ $name }}-control-plane" >> /etc/hosts
    postKubeadmCommands:
      - kubectl --kubeconfig /etc/kubernetes/admin.conf get nodes
    users:
      - name: capi
        sudo: ALL=(ALL) NOPASSWD:ALL
        sshAuthorizedKeys:
          - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBenchmarkKeyOnlyNotARealOne bench@example
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: DockerMachineTemplate
metadata:
  name: {{ $name }}-md-0
  namespace: {{ $.Values.namespace }}
spec:
  template:
    spec: {}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
metadata:
  name: {{ $name }}-md-0
  namespace: {{ $.Values.namespace }}
  labels:
    cluster.x-k8s.io/cluster-name: {{ $name }}
spec:
  template:
    spec:
      joinConfiguration:
        nodeRegistration:
          criSocket: unix:///var/run/containerd/containerd.sock
          kubeletExtraArgs:
            eviction-hard: nodefs.available<0%,nodefs.inodesFree<0%,imagefs.available<0%
            node-labels: node-role.example.com/worker=
      files:
        - path: /etc/sysctl.d/90-kubelet.conf
          owner: root:root
          permissions: "0644"
          content: |
            vm.overcommit_memory=1
            kernel.panic=10
        - path: /etc/containerd/certs.d/registry.example.com/hosts.toml
          owner: root:root
          permissions: "0644"
          content: |
            server = "https://registry.example.com"
            [host."https://mirror.example.com"]
              capabilities = ["pull", "resolve"]
      preKubeadmCommands:
        - sysctl --system
        - systemctl restart containerd
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata:
  name: {{ $name }}-md-0
  namespace: {{ $.Values.namespace }}
  labels:
    cluster.x-k8s.io/cluster-name: {{ $name }}
spec:
  clusterName: {{ $name }}
  replicas: 3
  selector:
    matchLabels: null
  template:
    spec:
      clusterName: {{ $name }}
      version: {{ $.Values.version }}
      bootstrap:
        configRef:
          apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
          kind: KubeadmConfigTemplate
          name: {{ $name }}-md-0
      infrastructureRef:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: DockerMachineTemplate
        name: {{ $name }}-md-0
{{- end }}
"""

CAPI_DOCS_PER_CLUSTER = 7


def write_capi_chart(directory: Path, clusters: int) -> Path:
    """``clusters`` Cluster API clusters of 7 objects each (2 kubeadm objects per cluster)."""
    values = f"clusters: {clusters}\nprefix: bench\nnamespace: clusters\nversion: v1.31.2\n"
    return _chart(directory, "capi", values, {"clusters.yaml": CAPI_TEMPLATE})


# --------------------------------------------------------------------------- big CRDs


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


WORDS = _words(
    "the field specifies a reference to resource object name namespace which is used when "
    "controller reconciles desired state of cluster this value must be set if not defaulted "
    "by webhook otherwise an error is reported in status conditions and may contain more "
    "than one entry that selects nodes pods volumes secrets config maps endpoints service "
    "account token projected into container at path mounted read only optional defaults "
    "to empty meaning no limit applies deprecated use instead will be removed in future "
    "release each item describes policy rule for matching labels selector requirement "
    "operator values key effect toleration seconds duration timeout interval period"
)

NAME_PARTS = _words(
    "access address affinity annotation backoff bucket cache certificate channel "
    "claim class condition config connection credential delay domain endpoint "
    "expression filter gateway group header health host identity image interval "
    "issuer key label lease limit listener match metric mode node object owner "
    "parameter path peer phase policy pool port priority probe protocol provider "
    "proxy quota range ratio reason region replica request resource retry role "
    "route rule schedule scope secret selector server service shard size source "
    "storage strategy subject target template tenant threshold timeout tls token "
    "topology url user version volume weight window zone"
)

FORMATS = ("", "", "", "date-time", "int-or-string", "uri", "byte")


def _camel(rng: random.Random, parts: int) -> str:
    words = [rng.choice(NAME_PARTS) for _ in range(parts)]
    return words[0] + "".join(w.capitalize() for w in words[1:])


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 18))]
    return " ".join(words).capitalize() + "."


def _description(out: list[str], pad: str, rng: random.Random) -> None:
    """controller-gen style: one plain line when short, else a ``|-`` block."""
    count = rng.choice((1, 1, 2, 3, 4, 6))
    sentences = [_sentence(rng) for _ in range(count)]
    if count == 1 and len(sentences[0]) < 70:
        out.append(f"{pad}description: {sentences[0]}\n")
        return
    out.append(f"{pad}description: |-\n")
    for paragraph, sentence in enumerate(sentences):
        if paragraph and rng.random() < 0.3:
            out.append("\n")
        out.append(f"{pad}  {sentence}\n")


POD_TEMPLATE_PROPERTIES = (
    "env",
    "envFrom",
    "image",
    "imagePullPolicy",
    "name",
    "args",
    "command",
    "workingDir",
)


def _pod_template(out: list[str], pad: str, rng: random.Random) -> None:
    """A PodTemplateSpec-like subtree: a CRD schema full of ``containers`` and ``env``."""
    _description(out, pad, rng)
    out.append(f"{pad}properties:\n")
    out.append(f"{pad}  metadata:\n")
    out.append(f"{pad}    type: object\n")
    out.append(f"{pad}    x-kubernetes-preserve-unknown-fields: true\n")
    out.append(f"{pad}  spec:\n")
    out.append(f"{pad}    properties:\n")
    for list_name in ("containers", "initContainers", "ephemeralContainers"):
        out.append(f"{pad}      {list_name}:\n")
        _description(out, pad + "        ", rng)
        out.append(f"{pad}        items:\n")
        _description(out, pad + "          ", rng)
        out.append(f"{pad}          properties:\n")
        for prop in POD_TEMPLATE_PROPERTIES:
            inner = pad + "              "
            out.append(f"{pad}            {prop}:\n")
            _description(out, inner, rng)
            if prop in ("env", "envFrom", "args", "command"):
                out.append(f"{inner}items:\n")
                if prop == "env":
                    out.append(f"{inner}  properties:\n")
                    for key in ("name", "value"):
                        out.append(f"{inner}    {key}:\n")
                        _description(out, inner + "      ", rng)
                        out.append(f"{inner}      type: string\n")
                    out.append(f"{inner}  required:\n{inner}  - name\n{inner}  type: object\n")
                    out.append(f"{inner}type: array\n")
                    out.append(f"{inner}x-kubernetes-list-map-keys:\n{inner}- name\n")
                    out.append(f"{inner}x-kubernetes-list-type: map\n")
                    continue
                out.append(f"{inner}  type: {'object' if prop == 'envFrom' else 'string'}\n")
                out.append(f"{inner}type: array\n")
                if prop != "envFrom":
                    out.append(f"{inner}x-kubernetes-list-type: atomic\n")
            else:
                out.append(f"{inner}type: string\n")
        out.append(
            f"{pad}          required:\n{pad}          - name\n{pad}          type: object\n"
        )
        out.append(f"{pad}        type: array\n")
    out.append(f"{pad}    type: object\n")
    out.append(f"{pad}type: object\n")


def _schema(out: list[str], pad: str, rng: random.Random, depth: int) -> None:
    """One property's schema (``pad``: its keys' indentation)."""
    roll = rng.random()
    if depth <= 0 or roll < 0.45:
        _description(out, pad, rng)
        scalar = rng.choice(("string", "string", "string", "integer", "boolean"))
        if scalar == "integer":
            out.append(f"{pad}format: int{rng.choice((32, 64))}\n")
            if rng.random() < 0.4:
                out.append(f"{pad}minimum: 0\n")
        elif scalar == "string":
            fmt = rng.choice(FORMATS)
            if fmt == "int-or-string":
                out.append(f"{pad}anyOf:\n{pad}- type: integer\n{pad}- type: string\n")
                out.append(f"{pad}x-kubernetes-int-or-string: true\n")
                return
            if fmt:
                out.append(f"{pad}format: {fmt}\n")
            elif rng.random() < 0.2:
                out.append(f"{pad}enum:\n")
                for _ in range(rng.randint(2, 5)):
                    out.append(f"{pad}- {rng.choice(NAME_PARTS).capitalize()}\n")
            elif rng.random() < 0.2:
                out.append(f"{pad}maxLength: 253\n")
                out.append(
                    f"{pad}pattern: ^[a-z0-9]([-a-z0-9]*[a-z0-9])?"
                    "(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$\n"
                )
        out.append(f"{pad}type: {scalar}\n")
        return
    if roll < 0.55:
        _description(out, pad, rng)
        out.append(f"{pad}additionalProperties:\n{pad}  type: string\n{pad}type: object\n")
        return
    if roll < 0.75:
        _description(out, pad, rng)
        out.append(f"{pad}items:\n")
        _object(out, pad + "  ", rng, depth - 1, describe=True)
        out.append(f"{pad}type: array\n")
        if rng.random() < 0.5:
            out.append(f"{pad}x-kubernetes-list-type: atomic\n")
        return
    _object(out, pad, rng, depth - 1, describe=True)


def _object(out: list[str], pad: str, rng: random.Random, depth: int, *, describe: bool) -> None:
    if describe:
        _description(out, pad, rng)
    names = sorted({_camel(rng, rng.randint(1, 3)) for _ in range(rng.randint(2, 9))})
    out.append(f"{pad}properties:\n")
    for name in names:
        out.append(f"{pad}  {name}:\n")
        _schema(out, pad + "    ", rng, depth)
    if rng.random() < 0.4:
        out.append(f"{pad}required:\n{pad}- {names[0]}\n")
    out.append(f"{pad}type: object\n")
    if rng.random() < 0.15:
        out.append(f"{pad}x-kubernetes-validations:\n")
        out.append(f"{pad}- message: {names[0]} is immutable\n")
        out.append(f"{pad}  rule: self.{names[0]} == oldSelf.{names[0]}\n")


def _spec_schema(rng: random.Random, target: int, with_pod_template: bool) -> list[str]:
    """The lines of a ``spec`` schema (relative indentation 0) of about ``target`` bytes."""
    out: list[str] = []
    _description(out, "", rng)
    out.append("properties:\n")
    size = 0
    seen: set[str] = set()
    if with_pod_template:
        out.append("  template:\n")
        _pod_template(out, "    ", rng)
        seen.add("template")
    while size < target:
        name = _camel(rng, rng.randint(1, 2))
        if name in seen:
            name += str(len(seen))
        seen.add(name)
        chunk: list[str] = [f"  {name}:\n"]
        _object(chunk, "    ", rng, rng.randint(1, 3), describe=True)
        size += sum(len(line) for line in chunk)
        out.extend(chunk)
    out.append("type: object\n")
    return out


def _indent(lines: list[str], pad: str) -> str:
    text = "".join(lines).splitlines(keepends=True)
    return "".join(pad + line if line != "\n" else line for line in text)


def crd_documents(total_bytes: int, seed: int = 7) -> Iterator[str]:
    """CustomResourceDefinitions (one string each, without ``---``) of about ``total_bytes``."""
    rng = random.Random(seed)
    written = 0
    index = 0
    while written < total_bytes:
        kind = "".join(w.capitalize() for w in (rng.choice(NAME_PARTS), rng.choice(NAME_PARTS)))
        kind += str(index)
        plural = kind.lower() + "s"
        group = f"{rng.choice(NAME_PARTS)}.bench.example.io"
        # two served versions with the same schema, as controller-gen writes them
        per_version = min(rng.randint(30_000, 150_000), max(4_000, (total_bytes - written) // 2))
        spec = _spec_schema(rng, per_version, with_pod_template=index % 3 == 0)
        status: list[str] = []
        _object(status, "", rng, 3, describe=True)
        head = (
            "apiVersion: apiextensions.k8s.io/v1\n"
            "kind: CustomResourceDefinition\n"
            "metadata:\n"
            "  annotations:\n"
            "    controller-gen.kubebuilder.io/version: v0.16.5\n"
            f"  name: {plural}.{group}\n"
            "spec:\n"
            f"  group: {group}\n"
            "  names:\n"
            "    categories:\n"
            "    - bench\n"
            f"    kind: {kind}\n"
            f"    listKind: {kind}List\n"
            f"    plural: {plural}\n"
            f"    singular: {kind.lower()}\n"
            "  scope: Namespaced\n"
            "  versions:\n"
        )
        parts = [head]
        for version, storage in (("v1beta1", "false"), ("v1", "true")):
            parts.append(
                "  - additionalPrinterColumns:\n"
                "    - jsonPath: .status.phase\n"
                "      name: Phase\n"
                "      type: string\n"
                "    - jsonPath: .metadata.creationTimestamp\n"
                "      name: Age\n"
                "      type: date\n"
                f"    name: {version}\n"
                "    schema:\n"
                "      openAPIV3Schema:\n"
                f"        description: {kind} is the Schema for the {plural} API.\n"
                "        properties:\n"
                "          apiVersion:\n"
                "            description: |-\n"
                "              APIVersion defines the versioned schema of this representation\n"
                "              of an object. Servers should convert recognized schemas to the\n"
                "              latest internal value, and may reject unrecognized values.\n"
                "            type: string\n"
                "          kind:\n"
                "            description: |-\n"
                "              Kind is a string value representing the REST resource this\n"
                "              object represents. Servers may infer this from the endpoint\n"
                "              the client submits requests to.\n"
                "            type: string\n"
                "          metadata:\n"
                "            type: object\n"
                "          spec:\n"
            )
            parts.append(_indent(spec, "            "))
            parts.append("          status:\n")
            parts.append(_indent(status, "            "))
            parts.append(
                "        type: object\n"
                "    served: true\n"
                f"    storage: {storage}\n"
                "    subresources:\n"
                "      status: {}\n"
            )
        text = "".join(parts)
        written += len(text)
        index += 1
        yield text


def write_crd_chart(directory: Path, total_bytes: int) -> Path:
    """A chart whose templates are big CRDs (one file each), about ``total_bytes`` rendered."""
    templates = {f"crd-{i:03d}.yaml": text for i, text in enumerate(crd_documents(total_bytes))}
    return _chart(directory, "crds", "{}\n", templates)


def write_crd_stream(path: Path, total_bytes: int) -> Path:
    """The CRDs as a plain stream (``---`` separated), as Helm 3 would print them."""
    with path.open("w", encoding="utf-8") as out:
        for i, text in enumerate(crd_documents(total_bytes)):
            out.write(f"---\n# Source: crds/templates/crd-{i:03d}.yaml\n{text}")
    return path


# --------------------------------------------------------------------------- plain streams

STREAM_DEPLOYMENT = """---
# Source: fleet/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: svc-{i}
  namespace: team-{team}
  labels:
    app.kubernetes.io/name: svc-{i}
    app.kubernetes.io/part-of: fleet
spec:
  replicas: {replicas}
  selector:
    matchLabels:
      app.kubernetes.io/name: svc-{i}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: svc-{i}
      annotations:
        prometheus.io/scrape: "true"
    spec:
      serviceAccountName: svc-{i}
      initContainers:
        - name: migrate
          image: registry.example.com/migrate:{i}
          args: ["--database", "svc-{i}"]
      containers:
        - name: app
          image: registry.example.com/svc-{i}:1.{team}.0
          env:
            - name: LOG_LEVEL
              value: info
            - name: POD_NAMESPACE
              valueFrom:
                fieldRef:
                  fieldPath: metadata.namespace
          ports:
            - name: http
              containerPort: 8080
          readinessProbe:
            httpGet:
              path: /healthz
              port: http
          resources:
            requests:
              cpu: 100m
              memory: 128Mi
        - name: proxy
          image: registry.example.com/envoy:1.31
          args: ["--config", "/etc/envoy/envoy.yaml"]
"""

STREAM_CONFIGMAP = """---
# Source: fleet/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: svc-{i}-config
  namespace: team-{team}
data:
  application.properties: |
    server.port=8080
    feature.flags=a,b,c
    cache.size={replicas}00
  LOG_FORMAT: json
"""

STREAM_SERVICE = """---
# Source: fleet/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: svc-{i}
  namespace: team-{team}
spec:
  selector:
    app.kubernetes.io/name: svc-{i}
  ports:
    - name: http
      port: 80
      targetPort: http
"""

# 7 of 10 documents are Deployments
STREAM_MIX = (
    STREAM_DEPLOYMENT,
    STREAM_CONFIGMAP,
    STREAM_DEPLOYMENT,
    STREAM_DEPLOYMENT,
    STREAM_SERVICE,
    STREAM_DEPLOYMENT,
    STREAM_DEPLOYMENT,
    STREAM_CONFIGMAP,
    STREAM_DEPLOYMENT,
    STREAM_DEPLOYMENT,
)


def stream_document(i: int) -> str:
    """Document ``i`` of the scaling stream (with its ``---`` and ``# Source:`` lines)."""
    template = STREAM_MIX[i % len(STREAM_MIX)]
    return template.format(i=i, team=i % 17, replicas=1 + i % 5)


def _write_documents(out: TextIO, documents: int | None, size: int | None) -> tuple[int, int]:
    written = count = 0
    batch: list[str] = []
    while (documents is None or count < documents) and (size is None or written < size):
        text = stream_document(count)
        batch.append(text)
        written += len(text)
        count += 1
        if len(batch) >= 1000:
            out.write("".join(batch))
            batch.clear()
    out.write("".join(batch))
    return count, written


def write_stream(path: Path, documents: int) -> Path:
    """``documents`` documents of the mix (mostly Deployments), written 1000 at a time."""
    with path.open("w", encoding="utf-8") as out:
        _write_documents(out, documents, None)
    return path


def write_stream_bytes(path: Path, size: int) -> int:
    """Documents of the mix until the file holds at least ``size`` bytes; their count."""
    with path.open("w", encoding="utf-8") as out:
        count, _ = _write_documents(out, None, size)
    return count


# --------------------------------------------------------------------------- flow style


def flow_deployment(size: int) -> str:
    """One Deployment in JSON on one line (flow style) of about ``size`` bytes: containers
    with args, two env entries (one a valueFrom) and resources, until the size is reached.
    What a tool that writes JSON renders; about 125 000 nodes per MiB."""
    head = (
        '{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "flow", '
        '"labels": {"app": "flow"}}, "spec": {"replicas": 1, "selector": {"matchLabels": '
        '{"app": "flow"}}, "template": {"metadata": {"labels": {"app": "flow"}}, "spec": '
        '{"containers": ['
    )
    tail = "]}}}}\n"
    containers: list[str] = []
    written = len(head) + len(tail)
    while written < size or not containers:
        i = len(containers)
        container = (
            f'{{"name": "c{i}", "image": "registry.example.com/app:{i}", "args": ["--flag", '
            f'"--n={i}"], "env": [{{"name": "LOG_LEVEL", "value": "info"}}, {{"name": "POD", '
            '"valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}], "resources": '
            '{"limits": {"cpu": "500m", "memory": "256Mi"}}}'
        )
        containers.append(container)
        written += len(container) + 2
    return head + ", ".join(containers) + tail


def write_flow_deployment(path: Path, size: int) -> int:
    """:func:`flow_deployment` of ``size`` bytes into ``path``; its container count."""
    text = flow_deployment(size)
    path.write_text(text, encoding="utf-8")
    return text.count('"name": "c')


# --------------------------------------------------------------------------- ClusterClass

_CLUSTERCLASS_HEAD = """\
apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata:
  name: wide
  namespace: default
spec:
  workers:
    machineDeployments:
    - class: linux
      template:
        bootstrap:
          ref:
            apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
            kind: KubeadmConfigTemplate
            name: wide-linux
        infrastructure:
          ref:
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
            kind: DockerMachineTemplate
            name: wide-linux
  patches:
"""
_SELECTOR = """\
    - selector:
        apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
        kind: KubeadmConfigTemplate
        matchResources:
          machineDeploymentClass:
            names: [linux]
"""


def clusterclass_wide_template(size: int) -> str:
    """A ClusterClass of about ``size`` bytes whose one patch replaces
    ``/spec/template/spec`` from a Go template with many top-level keys, each a mapping
    on the lines below it (each a key the tool must classify; issue 27, finding 4)."""
    head = (
        _CLUSTERCLASS_HEAD
        + "  - name: wideSpec\n    definitions:\n"
        + _SELECTOR
        + "      jsonPatches:\n      - op: replace\n        path: /spec/template/spec\n"
        + "        valueFrom:\n          template: |\n"
    )
    lines = [head]
    written = len(head)
    i = 0
    while written < size:
        line = f"            setting{i:07d}:\n              value: '{{{{ .value{i % 97} }}}}'\n"
        lines.append(line)
        written += len(line)
        i += 1
    return "".join(lines)


_OTHER_DEFINITION = """\
    - selector:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: DockerMachineTemplate
        matchResources:
          machineDeploymentClass:
            names: [linux]
      jsonPatches:
      - op: add
        path: /spec/template/spec/extraMounts/-
        valueFrom:
          variable: mount{j}x{k}
"""


def clusterclass_definitions(size: int, others: int = 10) -> str:
    """A ClusterClass of about ``size`` bytes with one patch of many definitions: one in
    ``others + 1`` replaces the ``files`` list of the workers' KubeadmConfigTemplate from
    a Go template and its ``preKubeadmCommands`` with a literal (the tool's output then
    records two entries for it), the others patch the machine template (nothing for the
    tool; issue 27, finding 4). Run the tool on it, then on its output: the second run
    reads the record."""
    head = _CLUSTERCLASS_HEAD + "  - name: manyDefinitions\n    definitions:\n"
    parts = [head]
    written = len(head)
    j = 0
    while written < size:
        part = (
            _SELECTOR
            + "      jsonPatches:\n"
            + "      - op: replace\n        path: /spec/template/spec/files\n"
            + "        valueFrom:\n          template: |\n"
            + f"            - path: /etc/app/{j}.conf\n"
            + f'              content: "{{{{ .config{j} }}}}"\n'
            + "      - op: replace\n        path: /spec/template/spec/preKubeadmCommands\n"
            + f"        value:\n        - echo definition {j}\n"
            + "".join(_OTHER_DEFINITION.format(j=j, k=k) for k in range(others))
        )
        parts.append(part)
        written += len(part)
        j += 1
    return "".join(parts)


def main(argv: list[str]) -> None:
    usage = (
        "usage: gen.py stream|stream-bytes|crds|flow|clusterclass-template|clusterclass-definitions"
        "|chart|flow-items-chart|crd-chart|capi-chart"
        "|tiny-chart OUT [N]"
    )
    if len(argv) < 2:
        raise SystemExit(usage)
    what, out = argv[0], Path(argv[1])
    number = int(argv[2]) if len(argv) > 2 else 0
    if what == "stream":
        write_stream(out, number or 1000)
    elif what == "stream-bytes":
        write_stream_bytes(out, number or 10_000_000)
    elif what == "crds":
        write_crd_stream(out, number or 10_000_000)
    elif what == "flow":
        write_flow_deployment(out, number or 1 << 20)
    elif what == "clusterclass-template":
        out.write_text(clusterclass_wide_template(number or 1 << 20), encoding="utf-8")
    elif what == "clusterclass-definitions":
        out.write_text(clusterclass_definitions(number or 1 << 20), encoding="utf-8")
    elif what == "chart":
        write_chart(out, number or 500)
    elif what == "flow-items-chart":
        write_flow_items_chart(out, number or 500)
    elif what == "crd-chart":
        write_crd_chart(out, number or 10_000_000)
    elif what == "capi-chart":
        write_capi_chart(out, number or 20)
    elif what == "tiny-chart":
        write_tiny_chart(out)
    else:
        raise SystemExit(usage)


if __name__ == "__main__":
    main(sys.argv[1:])
