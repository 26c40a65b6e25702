"""What a loaded profile asks of the engine: the run's Request."""

from __future__ import annotations

from proxy_postrender.errors import UsageError
from proxy_postrender.fields.setters import FieldSettings
from proxy_postrender.noproxy import fleet
from proxy_postrender.noproxy.fleet import UNKNOWN_CODE
from proxy_postrender.profile.records import Profile
from proxy_postrender.request import ClusterRule, CredentialSecret, Request
from proxy_postrender.structs import replace


def to_request(
    loaded: Profile,
    *,
    remove: bool = False,
    forbid_plaintext: bool = False,
    strict: bool = False,
    cluster: str | None = None,
) -> Request:
    """The request of ``loaded`` (``remove``: take out everything the tool injected;
    ``forbid_plaintext`` and ``strict`` as the command line asks, or the profile);
    ``cluster`` (``--cluster [NS/]NAME``): the workloads run in that cluster, and get the
    first entry that names it (the defaults when none does, which is reported).

    ``forbidPlaintext`` guards the run's whole output, whichever entry wrote a part of
    it: set in the defaults or in any entry, it holds for every request of the run."""
    forbid_plaintext = (
        forbid_plaintext
        or loaded.credentials.forbid_plaintext
        or any(entry.profile.credentials.forbid_plaintext for entry in loaded.entries())
    )
    rules = tuple(
        ClusterRule(
            entry.where,
            entry.match,
            to_request(
                entry.profile, remove=remove, forbid_plaintext=forbid_plaintext, strict=strict
            ),
        )
        for entry in loaded.entries()
    )
    defaults = replace(_request(loaded, remove, forbid_plaintext, strict), clusters=rules)
    if cluster is None:
        return defaults
    chosen = fleet.named_by([rule.match for rule in rules], cluster)
    if any(rules[i].request != rules[chosen[0]].request for i in chosen):
        raise UsageError(fleet.ambiguous(cluster, [rule.where for rule in rules], chosen))
    if chosen:
        return replace(rules[chosen[0]].request, clusters=rules, defaults=defaults)
    return replace(defaults, findings=((UNKNOWN_CODE, _unknown(cluster, rules)),))


def _unknown(cluster: str, rules: tuple[ClusterRule, ...]) -> str:
    if not rules:
        return (
            f"--cluster {cluster}: the profile has no spec.clusters entries; the workloads "
            "get the defaults"
        )
    return (
        f"--cluster {cluster}: no spec.clusters entry names it (in match.names); the "
        "workloads get the defaults"
    )


def _request(loaded: Profile, remove: bool, forbid_plaintext: bool, strict: bool) -> Request:
    """The request of the defaults (or of one entry's profile)."""
    on_conflict = loaded.on_conflict
    nodes = loaded.nodes
    if nodes is not None:
        nodes = replace(
            nodes,
            on_conflict=on_conflict,
            password=loaded.has_credentials,
            forbid_inline_password=loaded.has_credentials
            and loaded.credentials.secret_ref is not None,
        )
    return Request(
        env=() if remove else tuple(loaded.env_vars()),
        pods=replace(loaded.workloads, on_conflict=on_conflict),
        nodes=nodes,
        fields=FieldSettings(on_conflict, loaded.setter_ca),
        targets=loaded.custom,
        no_proxy=loaded.no_proxy_config,
        credential_secret=_credential_secret(loaded),
        ca_pem=loaded.ca_pem,
        ca_public_roots=loaded.ca_public_roots,
        forbid_plaintext=forbid_plaintext or loaded.credentials.forbid_plaintext,
        strict=strict or loaded.strict,
    )


def _credential_secret(loaded: Profile) -> CredentialSecret | None:
    """The Secret of spec.credentials.createSecret, with the proxy URLs it serves."""
    if not loaded.credentials.create_secret or loaded.credentials.secret_ref is None:
        return None
    data = [("HTTP_PROXY", loaded.http_proxy), ("HTTPS_PROXY", loaded.https_proxy)]
    pairs = tuple((key, url) for key, url in data if url)
    return CredentialSecret(loaded.credentials.secret_ref, pairs)
