"""Which names of the render's Services the ``services`` preset may write into NO_PROXY.

Service names come from the stream, so they are data: only what a Service can be
called may become an entry. Kubernetes takes a Service's name as a DNS-1035 label
and a namespace as a DNS-1123 label; anything else (``*``, ``0.0.0.0/0``, ``::/0``,
a dot, an escape) is refused by :func:`name_problem` and :func:`namespace_problem`.

Even a valid name is not one host to most clients. Go, curl, Python, wget and
undici read every name entry ``E`` as ``E`` and every name ending in ``.E`` (and
the JVM too: pods/java.py writes ``E|*.E`` for it); no NO_PROXY form names one host
alone for them (proxy-from-env alone matches a name entry exactly). So ``web``
also sends ``x.web`` direct, and ``web.shop`` every ``x.web.shop``. Those names
stay in the cluster (a headless Service's pods are ``POD.NAME.NAMESPACE``) unless
the entry's last label is a top-level domain of public DNS: a Service ``amazonaws``
in a namespace ``com`` would send all of ``*.amazonaws.com`` direct, a Service
``com`` all of ``*.com``.

A top-level label is alphabetic (RFC 1123 section 2.1), and ICANN delegates ASCII
top-level domains of letters only, the internationalised ones as A-labels
(``xn--``). A last label with a digit or a hyphen (``redis-master``,
``kube-system``, ``team-1``) can therefore never be one, today or after a new
round of delegations; a label of letters only may be one (``shop``, ``io``) or may
become one. The preset writes ``NAME`` and ``NAME.NAMESPACE`` only when their last
label cannot be a top-level domain, and leaves the others out with a warning: the
profile's author, who knows the cluster, may list them in ``spec.noProxy``.
"""

from __future__ import annotations

from proxy_postrender.patterns import compiled

# Kubernetes' validation of a Service's name and of a namespace (apimachinery)
_DNS1035 = compiled(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")
_DNS1123 = compiled(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")

LEFT_OUT_CODE = "noproxy/service-name"
# code, whether --strict makes it an error, what it means (docs/noproxy.md)
CODES: tuple[tuple[str, bool, str], ...] = (
    (LEFT_OUT_CODE, True, "a Service name the services preset leaves out of NO_PROXY"),
)


def _shown(value: object) -> str:
    """A value for a one-line message: repr (control characters escaped), shortened."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot be a Service's name (None: it can)."""
    if isinstance(name, str) and _DNS1035.fullmatch(name):
        return None
    return (
        f"the Service name {_shown(name)} is not a DNS-1035 label (at most 63 of a-z, 0-9 "
        "and '-', starting with a letter), which Kubernetes requires of a Service's name"
    )


def namespace_problem(namespace: object) -> str | None:
    """Why ``namespace`` cannot be a namespace's name (None: it can)."""
    if isinstance(namespace, str) and _DNS1123.fullmatch(namespace):
        return None
    return (
        f"the namespace {_shown(namespace)} is not a DNS-1123 label (at most 63 of a-z, "
        "0-9 and '-', starting and ending with a letter or digit)"
    )


def may_be_top_level(label: str) -> bool:
    """Whether ``label`` is, or may one day be, a top-level domain of public DNS:
    letters only, or an IDN A-label (``xn--``; any ``??--``, reserved for them)."""
    return label.isalpha() or label[2:4] == "--"


def forms(namespace: str, name: str) -> tuple[str, ...]:
    """``NAME`` and ``NAME.NAMESPACE`` (``NAME`` alone when the namespace is unknown:
    ""). ``NAME.NAMESPACE.svc`` is left to the ``kubernetes`` preset's ``.svc``."""
    return (name, f"{name}.{namespace}") if namespace else (name,)


def is_safe(form: str) -> bool:
    """Whether the names a client matches with the entry ``form`` (``form`` and every
    name ending in ``.form``) all stay out of public DNS."""
    return not may_be_top_level(form.rsplit(".", 1)[-1])


# how many forms the one warning names before it says how many more there are
_SHOWN_FORMS = 40


def left_out_message(left: list[tuple[str, str]]) -> str:
    """The one warning for every form the preset does not write: ``left`` holds
    ``(form, "namespace/name")`` pairs in the order of the render."""
    shown = [f"{form} ({label})" for form, label in left[:_SHOWN_FORMS]]
    more = len(left) - len(shown)
    if more:
        shown.append(f"and {more} more (noproxy --explain --stream lists them all)")
    names = ", ".join(form for form, _ in left[:_SHOWN_FORMS])
    return (
        f"preset services: {len(left)} form(s) of Service names left out of NO_PROXY, "
        "because Go, curl, Python, wget and undici would also send every name ending in "
        "them direct and their last label (letters only, or an xn-- A-label) may be a "
        f"public top-level domain: {', '.join(shown)}; to send them direct anyway, add "
        f"to spec.noProxy: {names}"
    )
