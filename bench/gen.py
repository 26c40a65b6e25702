"""Synthetic inputs for the benchmarks: a chart that renders N Deployments."""

from __future__ import annotations

from pathlib import Path

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


def write_chart(directory: Path, count: int) -> Path:
    (directory / "templates").mkdir(parents=True, exist_ok=True)
    (directory / "Chart.yaml").write_text(CHART_YAML)
    (directory / "values.yaml").write_text(f"count: {count}\n")
    (directory / "templates" / "deployments.yaml").write_text(DEPLOYMENTS)
    return directory
