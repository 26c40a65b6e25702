"""The profile's node settings (``spec.nodes``) and the names the profile and the
request need of the node planners, without them: a run whose stream holds no node
object never imports the planners (nodes/kubeadm.py and the rows' others)."""

from __future__ import annotations

from proxy_postrender.structs import FrozenStruct

# where the tool records what it added to a node object (files, commands)
ANNOTATION: str = "proxy-postrender.io/node-bootstrap"
DEFAULT_ENV_FILE: str = "/etc/proxy-postrender/proxy.env"


class NodeSettings(FrozenStruct):
    containerd_dropin: str
    kubelet_dropin: str | None
    credentials: str = "inline"  # "inline": values in the manifests; "secret": contentFrom
    secret_name: str | None = None  # default: <cluster>-systemd-proxy
    create_secret: bool = True
    env_file: str = DEFAULT_ENV_FILE
    windows: str = "configure"  # or "skip": leave Windows node templates alone
    # "dropins": values in each drop-in; "envfile": one env file, drop-ins point at it
    layout: str = "dropins"
    ca_bundle: str | None = None  # PEM of a TLS-intercepting proxy's CA, for the node's trust
    on_conflict: str = "keep"  # when a spec already writes a drop-in path: keep, override, fail
    password: bool = False  # a proxy URL carries user:password (stricter file modes)
    # spec.credentials.secretRef keeps the password out of the workloads: not in clear here
    forbid_inline_password: bool = False
    # "exports": kubeadm copies the exports into the static pods; "extraEnvs": the control
    # plane's extraEnvs carry them too (nodes/staticpods.py)
    static_pods: str = "exports"
    # "rename": templates others refer to are renamed by content (rollout/); "inPlace"
    rollout: str = "rename"
    rollout_after: str | None = None  # spec.nodes.rolloutAfter (nodes/rollouttime.py)
