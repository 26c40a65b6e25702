"""The records a loaded profile is made of: Profile, Credentials, the
command-line Overrides that take precedence over the file, and InputProfile,
what a profile that comes with the input may read."""

from __future__ import annotations

from urllib.parse import urlsplit

from proxy_postrender import TYPE_CHECKING, targets
from proxy_postrender.nodes.settings import NodeSettings
from proxy_postrender.noproxy import scope, syntax
from proxy_postrender.noproxy.fleet import ClusterMatch
from proxy_postrender.noproxy.scope import NoProxyConfig
from proxy_postrender.pods.selection import WorkloadSettings
from proxy_postrender.profile.tables import DEFAULT_CONTAINERD_DROPIN, DEFAULT_KUBELET_DROPIN
from proxy_postrender.structs import FrozenStruct, Struct, field
from proxy_postrender.targets import TargetTable

if TYPE_CHECKING:
    from typing import Any


# before Profile, whose field names it: compiled, an annotation is evaluated when the
# class is created (mypyc crashes on a class that does not exist yet)
class Credentials(FrozenStruct):
    secret_ref: str | None = None  # workloads read the proxy URLs from this Secret
    create_secret: bool = False  # and the tool emits it in every namespace it touches
    forbid_plaintext: bool = False


class Profile(FrozenStruct):
    name: str
    http_proxy: str | None
    https_proxy: str | None
    no_proxy_config: NoProxyConfig = field(default_factory=NoProxyConfig)
    workloads: WorkloadSettings = field(default_factory=WorkloadSettings)
    credentials: Credentials = field(default_factory=Credentials)
    ca_pem: str | None = None  # set when the workloads mount the proxy CA
    ca_public_roots: bool = False  # caBundle.mode: merged (the CA plus certifi's roots)
    setter_ca: str | None = None  # the proxy CA, for field setters (caBundle)
    custom: TargetTable = targets.BUILT_IN
    warnings: tuple[str, ...] = ()
    on_conflict: str = "keep"
    strict: bool = False  # the warnings whose code says so are errors (as --strict)
    nodes: NodeSettings | None = field(
        default_factory=lambda: NodeSettings(DEFAULT_CONTAINERD_DROPIN, DEFAULT_KUBELET_DROPIN)
    )
    # spec.clusters: ClusterEntry records, in order (a record cannot name its own class)
    clusters: tuple[Any, ...] = ()

    def entries(self) -> tuple[ClusterEntry, ...]:
        """The per-cluster entries (``spec.clusters``), in order."""
        return self.clusters

    @property
    def has_credentials(self) -> bool:
        return any(
            "@" in urlsplit(url).netloc for url in (self.http_proxy, self.https_proxy) if url
        )

    def no_proxy(self) -> list[syntax.Sourced]:
        """The NO_PROXY entries of the workloads, with their sources."""
        return scope.build(self.no_proxy_config)

    def env_vars(self) -> list[tuple[str, str]]:
        """The variables every container gets, upper case first, in a fixed order."""
        return env_with(self.http_proxy, self.https_proxy, self.no_proxy())


class ClusterEntry(FrozenStruct):
    """One ``spec.clusters[]`` entry: which Clusters, and the whole profile they get (the
    defaults with the entry's fields over them; it has no entries of its own)."""

    where: str  # "spec.clusters[0]", for the messages
    match: ClusterMatch
    profile: Profile


def env_with(
    http_proxy: str | None, https_proxy: str | None, entries: list[syntax.Sourced]
) -> list[tuple[str, str]]:
    upper: list[tuple[str, str]] = []
    if http_proxy:
        upper.append(("HTTP_PROXY", http_proxy))
    if https_proxy:
        upper.append(("HTTPS_PROXY", https_proxy))
    if entries:
        upper.append(("NO_PROXY", syntax.join(item.entry for item in entries)))
    return upper + [(name.lower(), value) for name, value in upper]


class Overrides(Struct):
    """Values from command-line flags; ``None`` means "not given"."""

    http_proxy: str | None = None
    https_proxy: str | None = None
    no_proxy: str | None = None
    on_conflict: str | None = None
    namespace: str | None = None  # the release namespace (--namespace, ARGOCD_APP_NAMESPACE)

    def any_proxy(self) -> bool:
        return self.http_proxy is not None or self.https_proxy is not None


class InputProfile(FrozenStruct):
    """A profile that comes with the input (a KRM functionConfig, the config kustomize
    hands its exec plugin, a file in an Argo CD application's repository): whoever writes
    the stream wrote it, not the pipeline's operator. It reads no variable of the tool's
    environment (``${VAR}``, ``spec.credentials.fromEnv``) unless ``allow_env``, and no
    file outside ``directory``."""

    route: str  # how it came, for the messages: "a KRM functionConfig"
    directory: str  # its relative file names start here, and its files must be in it
    allow_env: bool = False
    how_to_allow: str = ""  # the end of the message that refuses a variable

    def env_denied(self) -> str | None:
        """Why it may read no variable (None: it may)."""
        if self.allow_env:
            return None
        return (
            f"this profile comes with the input ({self.route}) and reads no environment "
            f"variable unless allowed; {self.how_to_allow}"
        )
