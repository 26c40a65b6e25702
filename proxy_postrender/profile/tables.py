"""The option tables of the ProxyProfile: one table per section, each field once.

A row says a field's name, kind, meaning (the text of docs/profile.md's field
reference), default, what null means, and where needed the message that
replaces the generic one. The order of the rows is the order of the docs and
the order in which check.read checks the fields. Plain data: check.py
validates against it, schema.py and reference.py describe it.
"""

from __future__ import annotations

from collections.abc import Callable

from proxy_postrender import targets
from proxy_postrender.nodes.settings import DEFAULT_ENV_FILE
from proxy_postrender.noproxy import presets as noproxy_presets
from proxy_postrender.noproxy.scope import STYLES
from proxy_postrender.pods.selection import OPERATORS
from proxy_postrender.profile import rules
from proxy_postrender.profile.options import (
    ANY,
    BOOL,
    DROP_IN,
    ENDPOINT,
    ENV_NAME,
    ENV_NAMES,
    FILE,
    HOST,
    JSONPATH,
    LABEL_KEY,
    LABELS,
    NO_PROXY,
    NODE_PATH,
    PATH,
    PEM,
    PROXY_URL,
    STRING,
    STRINGS,
    TIMESTAMP,
    VARIABLE,
    Option,
    Section,
    addresses,
    choice,
    const,
    mapping,
    mappings,
    object_name,
    presets,
    rule_list,
    section,
    setters,
)

API_VERSION = "proxy-postrender.io/v1alpha1"
KIND = "ProxyProfile"
ON_CONFLICT = ("keep", "override", "fail")
DEFAULT_CONTAINERD_DROPIN = "/etc/systemd/system/containerd.service.d/http-proxy.conf"
DEFAULT_KUBELET_DROPIN = "/etc/systemd/system/kubelet.service.d/http-proxy.conf"
CA_ENV_DEFAULT = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS")
CA_MODES = ("merged", "replace")  # spec.caBundle.mode: with a public root set, or the CA alone
_NOT_A_MAPPING = {"mapping": "{where} must be a mapping"}
# The tables of list items a profile rarely has (spec.workloads' rules and extraEnv,
# spec.clusters, spec.targets): made on first use, by name (a run whose profile has none
# never builds them: start-up).
_MADE: dict[str, Section] = {}


def _made(name: str, make: Callable[[], Section]) -> Section:
    """The table ``name``: made by ``make`` on its first use, then the same object."""
    found = _MADE.get(name)
    if found is None:
        found = _MADE[name] = make()
    return found


CLUSTER = section(
    "spec.cluster",
    Option(
        "podCIDRs",
        addresses("cidr", "ip"),
        "The pod networks: CIDRs (or addresses).",
        (),
    ),
    Option(
        "serviceCIDRs",
        addresses("cidr", "ip"),
        "The service networks: CIDRs (or addresses).",
        (),
    ),
    Option(
        "nodeCIDRs",
        addresses("cidr", "ip"),
        "The networks of the nodes: CIDRs (or addresses).",
        (),
    ),
    Option(
        "apiServer",
        addresses("ip", "domain"),
        "The apiserver's in-cluster addresses or names.",
        (),
        shown="the first address of the first service CIDR",
    ),
    Option(
        "domain",
        HOST,
        "The cluster domain (lower-cased, without a final dot).",
        shown="`cluster.local`",
    ),
    Option(
        "controlPlaneEndpoint",
        ENDPOINT,
        "The control-plane endpoint, `host[:port]` or `[v6]:port`; its host joins NO_PROXY.",
    ),
    doc="What you know of the cluster the workloads run in; each field becomes NO_PROXY "
    "entries (after `spec.noProxy`, before the presets).",
)

NODES = section(
    "spec.nodes",
    Option(
        "enabled",
        BOOL,
        "`true`: Cluster API kubeadm objects get drop-ins and exports "
        "([cluster-api.md](cluster-api.md)); `false`: they are left alone, and the other "
        "fields of `spec.nodes` are not read.",
        True,
        "check",
    ),
    Option(
        "containerdDropIn",
        DROP_IN,
        "Path of containerd's drop-in (`UNIT.d/NAME.conf`).",
        DEFAULT_CONTAINERD_DROPIN,
        "check",
    ),
    Option(
        "kubeletDropIn",
        DROP_IN,
        "Path of kubelet's drop-in; `null` for none.",
        DEFAULT_KUBELET_DROPIN,
        "none",
    ),
    Option(
        "envFile",
        NODE_PATH,
        "Where the env file for the exports goes on the node (and, with `layout: envfile`, "
        "the one file the drop-ins read).",
        DEFAULT_ENV_FILE,
        "check",
    ),
    Option(
        "credentials",
        choice("inline", "secret"),
        "`inline`: values in the kubeadm objects; `secret`: files come from a Secret through "
        "`contentFrom` ([cluster-api.md](cluster-api.md#secret-backed-credentials)).",
        "inline",
        "check",
    ),
    Option(
        "secretName",
        object_name(253),
        "The name of that Secret; required when the stream holds a ClusterClass whose "
        "patches or templates the tool changes (one Secret name for all its clusters).",
        shown="`<cluster>-systemd-proxy`",
    ),
    Option(
        "layout",
        choice("dropins", "envfile"),
        "`dropins`: the values in each drop-in; `envfile`: one 0600 env file, drop-ins with "
        "`EnvironmentFile=`, commands that source it.",
        "dropins",
        "check",
    ),
    Option(
        "windows",
        choice("configure", "skip"),
        "`configure`: Windows node templates get a PowerShell command that sets the "
        "variables machine-wide; `skip`: they are left alone.",
        "configure",
        "check",
    ),
    Option(
        "createSecret",
        BOOL,
        "Whether the tool emits that Secret.",
        True,
        "check",
    ),
    Option(
        "staticPods",
        choice("exports", "extraEnvs"),
        "How the control plane's static pods (kube-apiserver, kube-controller-manager, "
        "kube-scheduler) get the proxy. `exports`: kubeadm copies the exported variables "
        "into them; `extraEnvs`: the same values are also written, per component, into "
        "`clusterConfiguration.{apiServer,controllerManager,scheduler}.extraEnvs` of "
        "KubeadmControlPlane(Template), where they win over the copy (Kubernetes >= 1.31, "
        "Cluster API >= 1.8; static pods cannot read a Secret: refused with a password in "
        "secret mode) ([cluster-api.md](cluster-api.md#static-pods-extraenvs)).",
        "exports",
        "check",
    ),
    Option(
        "rollout",
        choice("rename", "inPlace"),
        "How a change reaches running machines ([cluster-api.md](cluster-api.md#changing-the-"
        "proxy-of-running-clusters)). `rename`: a worker bootstrap template (or a "
        "MachinePool's config) that something of the stream refers to is renamed "
        "`<name>-<digest of the tool's content>` and the references follow, so Cluster API "
        "rolls its machines; node Secrets carry the digest of their content too. "
        "`inPlace`: names stay (Talos templates, which are immutable, are renamed anyway).",
        "rename",
        "check",
    ),
    Option(
        "rolloutAfter",
        TIMESTAMP,
        "A time written to the MachineDeployments that refer to a node template of the "
        "stream and to the control planes the tool changes (`spec.rollout.after` in "
        "v1beta2, `spec.rolloutAfter` in v1beta1): machines made before it are replaced "
        "once it has passed.",
    ),
    doc="Node bootstrap of Cluster API clusters: systemd drop-ins for containerd and kubelet, "
    "`export` lines before kubeadm runs ([cluster-api.md](cluster-api.md)). The three "
    "paths must differ.",
    switch="enabled",
    rule=rules.nodes,
)


def requirement_table() -> Section:
    return _made(
        "REQUIREMENT",
        lambda: section(
            "spec.workloads.include[].selector.matchExpressions[]",
            Option("key", LABEL_KEY, "The label key.", null="check", required=True),
            Option(
                "operator",
                choice(*OPERATORS),
                "`NotIn` also matches when the label is absent.",
                null="check",
                required=True,
            ),
            Option(
                "values",
                STRINGS,
                "The values, for `In` and `NotIn` (at least one); none for `Exists` and "
                "`DoesNotExist`.",
                (),
            ),
            doc="A requirement of a label selector, with Kubernetes semantics.",
            rule=rules.requirement,
        ),
    )


def selector_table() -> Section:
    return _made(
        "SELECTOR",
        lambda: section(
            "spec.workloads.include[].selector",
            Option(
                "matchLabels",
                LABELS,
                "Labels the object must have, with these values.",
                (),
                "falsy",
                shown="`{}`",
            ),
            Option(
                "matchExpressions",
                mappings(requirement_table),
                "Requirements the object's labels must all meet.",
                (),
                "falsy",
            ),
            doc="A Kubernetes label selector, on the object's labels.",
        ),
    )


def rule_table() -> Section:
    return _made(
        "RULE",
        lambda: section(
            "spec.workloads.include[]",
            Option("kinds", STRINGS, "Kinds, matched exactly.", ()),
            Option("namespaces", STRINGS, "Namespaces, as shell globs.", ()),
            Option("names", STRINGS, "Object names, as shell globs.", ()),
            Option("selector", mapping(selector_table), "A label selector on the object's labels."),
            doc="A rule of `include` or `exclude`: it matches when every criterion it gives "
            "matches.",
        ),
    )


CONTAINERS = section(
    "spec.workloads.containers",
    Option("include", STRINGS, "Container name globs; none: every container.", ()),
    Option("exclude", STRINGS, "Container name globs left out.", ()),
    doc="Which containers of a chosen object get the variables.",
    messages={"mapping": "{where}: must be a mapping with include/exclude"},
)

_NAME_AND_VALUE = "{where}: must be a mapping with name and value"


def extra_env_table() -> Section:
    return _made(
        "EXTRA_ENV",
        lambda: section(
            "spec.workloads.extraEnv[]",
            Option("name", ENV_NAME, "The variable's name.", null="check", required=True),
            Option("value", STRING, "Its value.", null="check", required=True),
            doc="One more variable for the chosen containers.",
            messages={
                "mapping": _NAME_AND_VALUE,
                "keys": _NAME_AND_VALUE,
                "required": _NAME_AND_VALUE,
            },
        ),
    )


WORKLOADS = section(
    "spec.workloads",
    Option(
        "include",
        rule_list(rule_table),
        "One rule, or a list of rules: an object is chosen when some rule matches (or there "
        "is none).",
        (),
    ),
    Option(
        "exclude",
        rule_list(rule_table),
        "One rule, or a list of rules: an object that some rule matches is left out.",
        (),
    ),
    Option(
        "containers",
        mapping(CONTAINERS),
        "Which containers get the variables (`include`, `exclude`).",
        {},
        "falsy",
    ),
    Option("initContainers", BOOL, "Whether init containers get them too.", True),
    Option("upperCase", BOOL, "`HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`.", True),
    Option(
        "lowerCase",
        BOOL,
        "`http_proxy`, `https_proxy`, `no_proxy`; `upperCase` and `lowerCase` cannot both "
        "be false.",
        True,
    ),
    Option(
        "javaToolOptions",
        BOOL,
        "Also `JAVA_TOOL_OPTIONS` (`-Dhttp.proxyHost` and the like) for JVMs.",
        False,
    ),
    Option(
        "extraEnv",
        mappings(extra_env_table),
        "More variables (`name`, `value`) for the same containers; not the proxy variables "
        "nor `JAVA_TOOL_OPTIONS`, each name once.",
        (),
        "falsy",
    ),
    doc="Which workloads and containers get the variables, and which variables: see "
    "[Targeting](#targeting-specworkloads).",
    rule=rules.workloads,
)

FROM_ENV = section(
    "spec.credentials.fromEnv",
    Option(
        "user",
        VARIABLE,
        "The variable that holds the user name.",
        null="check",
        required=True,
    ),
    Option(
        "password",
        VARIABLE,
        "The variable that holds the password.",
        null="check",
        required=True,
        secret=True,
    ),
    doc="User and password from the tool's environment, URL-encoded for you. The proxy URLs "
    "must then have no user of their own.",
    messages={"mapping": "{where}: must be a mapping with user and password"},
)

CREDENTIALS = section(
    "spec.credentials",
    Option(
        "fromEnv",
        mapping(FROM_ENV),
        "User and password from environment variables (`user`, `password`: their names).",
    ),
    Option(
        "secretRef",
        object_name(),
        "Workloads read `HTTP_PROXY` and `HTTPS_PROXY` from this Secret.",
        messages={"object-name": "{where}: must be the name of a Secret"},
    ),
    Option(
        "createSecret",
        BOOL,
        "`true`: emit that Secret once per namespace the workloads are in (needs `secretRef`).",
        False,
        "check",
    ),
    Option(
        "forbidPlaintext",
        BOOL,
        "`true`: fail when the output holds a password in clear (not with `createSecret`).",
        False,
        "check",
    ),
    doc="Where the proxy's user and password come from, and whether they may appear in the "
    "output: see [Credentials](#credentials-speccredentials).",
    rule=rules.credentials,
)

CA_BUNDLE = section(
    "spec.caBundle",
    Option(
        "file",
        FILE,
        "A file with the CA's PEM certificates, relative to the profile file; a profile "
        "that comes with the input reads only files in its directory "
        "([who writes the profile](#who-writes-the-profile)).",
        null="check",
    ),
    Option("pem", PEM, "The PEM certificates inline.", null="check"),
    Option(
        "nodes",
        BOOL,
        "Cluster API nodes trust it (when `spec.nodes` is on).",
        True,
    ),
    Option(
        "workloads",
        BOOL,
        "Workloads get it: a ConfigMap per namespace, mounted read-only.",
        False,
    ),
    Option(
        "mode",
        choice(*CA_MODES),
        "What the workloads' ConfigMap holds: `merged`, the CA followed by a public root "
        "set (certifi's, its version in the annotation `proxy-postrender.io/ca-roots`), "
        "so that servers the proxy does not intercept still verify; `replace`, the CA alone "
        "(the default before; see [CA bundle](#ca-bundle-speccabundle)).",
        "merged",
        "check",
    ),
    Option(
        "configMapName",
        object_name(),
        "The ConfigMap the tool emits for the workloads.",
        "proxy-ca-bundle",
        "check",
        messages={"object-name": "{where}: must be a ConfigMap name"},
    ),
    Option(
        "mountPath",
        PATH,
        "Where the workloads' containers see it (the file `ca.crt` in it).",
        "/etc/proxy-postrender/ca",
        "check",
    ),
    Option(
        "env",
        ENV_NAMES,
        "Variables the workloads get, set to the CA file.",
        CA_ENV_DEFAULT,
        "check",
    ),
    doc="The CA of a TLS-intercepting proxy, for Cluster API nodes and (opt-in) workloads: "
    "see [CA bundle](#ca-bundle-speccabundle).",
    messages={"one_of": "{where}: give the CA as file or as pem (one of them)"},
    one_of=("file", "pem"),
)


def target_selector_table() -> Section:
    return _made(
        "TARGET_SELECTOR",
        lambda: section(
            "spec.targets[].selector",
            Option("matchLabels", LABELS, "Labels the object must all have.", required=True),
            doc="Which objects of the kind, by their labels.",
        ),
    )


def embedded_table() -> Section:
    return _made(
        "EMBEDDED",
        lambda: section(
            "spec.targets[].embedded",
            Option(
                "path",
                JSONPATH,
                "JSONPath of the string field that holds the document.",
                required=True,
            ),
            Option(
                "format",
                choice(*targets.EMBEDDED_FORMATS),
                "How the document is written (a kubeconfig is YAML).",
                "yaml",
            ),
            Option(
                "encoding",
                choice(*targets.ENCODINGS),
                "`base64`: the field holds the document base64-encoded (a Secret's `data`).",
                "none",
            ),
            doc="A document held as text in a field: the `set` paths apply inside it "
            "([Embedded documents](#embedded-documents)).",
        ),
    )


def target_table() -> Section:
    # for the docs and the schema: loader._targets parses spec.targets by hand
    return _made(
        "TARGET",
        lambda: section(
            "spec.targets[]",
            Option(
                "preset",
                choice(*targets.TARGET_PRESETS),
                "A built-in entry by name (`ocm-addon`, `ocm-klusterlet`, "
                "`kapp-controller`); alone.",
            ),
            Option(
                "apiVersion",
                STRING,
                "The kind's API version; the group counts, not the version.",
            ),
            Option("kind", STRING, "The kind; not one of the built-in targets."),
            Option(
                "podTemplate",
                JSONPATH,
                "JSONPath of a PodTemplateSpec: its spec gets the workload treatment.",
            ),
            Option(
                "set",
                setters(*targets.FIELD_VALUES),
                "JSONPaths of the object's content (or of the embedded document), each set from a "
                "profile value; `[*]` stands for every item of a list.",
            ),
            Option("name", object_name(253), "Only the object of this name."),
            Option("namespace", object_name(63), "Only objects of this namespace."),
            Option("selector", mapping(target_selector_table), target_selector_table().doc),
            Option("embedded", mapping(embedded_table), embedded_table().doc),
            doc="A kind the tool changes besides the built-in ones: see "
            "[Custom targets](#custom-targets-spectargets).",
        ),
    )


def cluster_match_table() -> Section:
    return _made(
        "CLUSTER_MATCH",
        lambda: section(
            "spec.clusters[].match",
            Option(
                "names",
                STRINGS,
                "Cluster API `Cluster` objects by `[NAMESPACE/]NAME`; a name without a namespace "
                "matches a Cluster of that name in any namespace.",
                (),
            ),
            Option(
                "labels",
                LABELS,
                "Labels the `Cluster` must all have, with these values.",
                (),
                "falsy",
                shown="`{}`",
            ),
            doc="Which Clusters an entry is for: a Cluster matches when it is named (or no names "
            "are given) and has every label (or no labels are given); at least one of the two.",
            rule=rules.cluster_match,
        ),
    )


def cluster_nodes_table() -> Section:
    return _made(
        "CLUSTER_NODES",
        lambda: section(
            "spec.clusters[].nodes",
            Option(
                "secretName",
                object_name(253),
                "The Secret the nodes of these clusters read in secret mode "
                "(`spec.nodes.credentials: secret`).",
            ),
            doc="What of `spec.nodes` an entry may change.",
        ),
    )


def cluster_entry_table() -> Section:
    return _made(
        "CLUSTER_ENTRY",
        lambda: section(
            "spec.clusters[]",
            Option(
                "match",
                mapping(cluster_match_table),
                cluster_match_table().doc,
                null="check",
                required=True,
            ),
            Option(
                "httpProxy",
                PROXY_URL,
                "Replaces `spec.httpProxy` for these clusters (the same rules).",
                expand=True,
            ),
            Option(
                "httpsProxy",
                PROXY_URL,
                "Replaces `spec.httpsProxy` for these clusters (the same rules).",
                expand=True,
            ),
            Option(
                "noProxy",
                NO_PROXY,
                "Added after `spec.noProxy` for these clusters (the same rules).",
                (),
            ),
            Option(
                "credentials",
                mapping(CREDENTIALS),
                "Replaces `spec.credentials` for these clusters.",
            ),
            Option("caBundle", mapping(CA_BUNDLE), "Replaces `spec.caBundle` for these clusters."),
            Option("nodes", mapping(cluster_nodes_table), cluster_nodes_table().doc),
            doc="A per-cluster entry: what the nodes of the matching Clusters get instead of the "
            "defaults, and the workloads with `--cluster`; the first entry that matches wins. See "
            "[Fleets](cluster-api.md#fleets-one-profile-for-many-clusters).",
        ),
    )


SPEC = section(
    "spec",
    Option(
        "httpProxy",
        PROXY_URL,
        "URL for `HTTP_PROXY`/`http_proxy`. `http://` or `https://`, a host, optional port "
        "and credentials; no path, query or whitespace. In the user name and password, "
        "anything but letters, digits and `-._~!$&'()*+,;=` must be percent-encoded "
        '(`%22` for `"`), as Go programs (containerd, kubelet, kubeadm) read it.',
        expand=True,
    ),
    Option(
        "httpsProxy",
        PROXY_URL,
        "URL for `HTTPS_PROXY`/`https_proxy`. At least one of the two is required; a "
        "variable whose field is absent is not injected.",
        expand=True,
    ),
    Option(
        "noProxy",
        NO_PROXY,
        "A list, or one comma-separated string. Entries: a domain (`example.com`), a suffix "
        "(`.example.com`; `*.example.com` is written as `.example.com`), an IPv4/IPv6 "
        "address, a CIDR, `host:port`, `[v6]:port`, or a lone `*`. A `/0` CIDR "
        "(`0.0.0.0/0`, `::/0`, `1.2.3.4/0`) is refused: write `*` to turn the proxy off for "
        "every host. Entries are trimmed, "
        "lower-cased and de-duplicated in order. They come first in NO_PROXY, before the "
        "cluster's networks and the presets ([noproxy.md](noproxy.md)); when the whole list "
        "is empty, `NO_PROXY` is not injected.",
        (),
    ),
    Option(
        "noProxyPresets",
        presets(*noproxy_presets.PRESETS),
        "Preset lists added to NO_PROXY; `[]` (or `null`) for none. See "
        "[noproxy.md](noproxy.md#what-goes-into-the-list).",
        noproxy_presets.DEFAULT_PRESETS,
        "empty",
    ),
    Option(
        "noProxyStyle",
        choice(*STYLES),
        "`portable`: write what Go, curl, Python, wget, Java and Node.js read alike where "
        "possible; `exact`: write the entries as normalised, nothing added.",
        "portable",
        "check",
    ),
    Option(
        "noProxyDiscovery",
        BOOL,
        "`true`: Cluster API kubeadm objects also get the networks of their `Cluster` in the "
        "stream.",
        True,
        "check",
    ),
    Option("cluster", mapping(CLUSTER), CLUSTER.doc, {}),
    Option(
        "onConflict",
        choice(*ON_CONFLICT),
        "What to do when a container already sets one of the variables (or a kubeadm spec "
        "already writes a drop-in path): `keep` it (and report it), `override` it, or "
        "`fail`.",
        "keep",
        "check",
    ),
    Option(
        "strict",
        BOOL,
        "`true`: the warnings whose code says so are errors, as with `--strict`: nothing is "
        "written and the exit code is 1. Today: other owners of the node proxy settings "
        "([cluster-api.md](cluster-api.md#other-owners-of-the-proxy-settings)).",
        False,
        "check",
    ),
    Option("nodes", mapping(NODES), NODES.doc, {}),
    Option("workloads", mapping(WORKLOADS), WORKLOADS.doc, {}),
    Option("credentials", mapping(CREDENTIALS), CREDENTIALS.doc),
    Option("caBundle", mapping(CA_BUNDLE), CA_BUNDLE.doc),
    Option(
        "clusters",
        mappings(cluster_entry_table),
        "Per-cluster entries (`match`, then what differs from the defaults): "
        "see [Fleets](cluster-api.md#fleets-one-profile-for-many-clusters).",
        (),
    ),
    Option(
        "targets",
        mappings(target_table),
        "More kinds: pod templates in CRDs, and fields set from profile values: see "
        "[Custom targets](#custom-targets-spectargets).",
        (),
    ),
    doc="What to inject.",
    messages=_NOT_A_MAPPING,
)

METADATA = section(
    "metadata",
    Option("name", ANY, "The profile's name, for `--profile-name`."),
    Option("namespace", ANY, "Not used."),
    Option("labels", ANY, "Not used."),
    Option("annotations", ANY, "Not used (KRM tools put theirs here)."),
    doc="As in any Kubernetes object.",
    messages=_NOT_A_MAPPING,
)

PROFILE = section(
    "",
    Option("apiVersion", const(API_VERSION), "The profile format's version.", required=True),
    Option("kind", const(KIND), "Always `ProxyProfile`.", required=True),
    Option("metadata", mapping(METADATA), METADATA.doc, {}, "falsy"),
    Option("spec", mapping(SPEC), SPEC.doc, null="check", required=True),
    doc="A ProxyProfile.",
    messages={"mapping": "{where}: a ProxyProfile must be a mapping"},
    root=True,
)


def sections() -> tuple[Section, ...]:
    """Every table, in the order of the reference (those made on first use made now)."""
    return (
        PROFILE,
        METADATA,
        SPEC,
        CLUSTER,
        NODES,
        WORKLOADS,
        rule_table(),
        selector_table(),
        requirement_table(),
        CONTAINERS,
        extra_env_table(),
        CREDENTIALS,
        FROM_ENV,
        CA_BUNDLE,
        cluster_entry_table(),
        cluster_match_table(),
        cluster_nodes_table(),
        target_table(),
        target_selector_table(),
        embedded_table(),
    )
