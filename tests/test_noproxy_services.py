"""Short Service names (issue 20, item 4): ``noproxy check`` checks them, and the
opt-in ``services`` preset adds ``NAME`` and ``NAME.NAMESPACE`` of the render's Services."""

from __future__ import annotations

import re
from pathlib import Path

from proxy_postrender.noproxy import clients, discovery, explain, presets, scope
from proxy_postrender.noproxy.scope import NoProxyConfig
from proxy_postrender.yamltext import stream
from tests.helpers import GOLDEN, run_cli

STREAM = b"""\
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  ports:
  - port: 8080
---
apiVersion: v1
kind: Service
metadata:
  name: cache
spec:
  ports:
  - port: 6379
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {name: db, namespace: data}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx
"""

PROFILE = """\
apiVersion: proxy-postrender.io/v1alpha1
kind: ProxyProfile
metadata:
  name: corp
spec:
  httpProxy: http://proxy.corp:3128
  noProxyPresets: [{presets}]
"""


def _profile(tmp_path: Path, names: str) -> str:
    path = tmp_path / "profile.yaml"
    path.write_text(PROFILE.format(presets=names))
    return str(path)


def _services(namespace: str | None = None) -> tuple[discovery.ServiceRef, ...]:
    return discovery.discover_services(stream.split(STREAM.decode()), namespace)


def _fields(services: tuple[discovery.ServiceRef, ...]) -> list[tuple[str, str, int | None]]:
    return [(service.namespace, service.name, service.port) for service in services]


def test_the_services_of_a_stream_are_found() -> None:
    expected = [("shop", "web", 8080), ("", "cache", 6379), ("data", "db", None)]
    assert _fields(_services()) == expected
    assert _fields(_services("shop"))[1] == ("shop", "cache", 6379)
    # each knows its document, for an error about it
    assert [s.context.index if s.context else None for s in _services()] == [1, 2, 3]


def test_check_reports_the_short_names_that_go_through_the_proxy() -> None:
    args = ["noproxy", "check", "--value", "localhost,.svc,web", "--stream", "-"]
    proc = run_cli([*args, "--namespace", "shop"], STREAM)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode()
    rows = {line.split()[0]: line.split()[1:5] for line in text.splitlines()[4:] if "  " in line}
    for name in ("kubernetes:443", "kubernetes.default:443", "web.shop:8080", "cache:6379"):
        assert rows[name] == ["PROXY"] * 4, name
    for name in ("kubernetes.default.svc:443", "web:8080", "web.shop.svc:8080", "db.data.svc:443"):
        assert rows[name] == ["direct"] * 4, name
    summary = text.split("Service names that go through the proxy (")[1]
    assert (
        "web.shop (Service shop/web): via the proxy for go, curl, requests, wget; add web.shop"
        in (summary)
    )
    assert "kubernetes.default (apiserver Service name)" in summary
    assert "web:" not in summary.split("(spec.noProxyPresets")[0].replace("web.shop", "")


def test_check_without_services_still_checks_the_apiserver_names() -> None:
    proc = run_cli(["noproxy", "check", "--value", "kubernetes,kubernetes.default,.svc"])
    assert proc.returncode == 0, proc.stderr
    assert "Service names that go through the proxy" not in proc.stdout.decode()


def test_fix_for_a_svc_name_is_the_suffix() -> None:
    from proxy_postrender.noproxy import clients

    dest = clients.parse_destination("web.shop.svc:80")
    assert explain.fix_for("localhost", dest) == ".svc"
    assert explain.fix_for("localhost", clients.parse_destination("web:80")) == "web"


# Services whose last labels cannot be top-level domains (a digit or a hyphen in each)
SAFE_STREAM = b"""\
apiVersion: v1
kind: Service
metadata: {name: web-front, namespace: shop-1}
---
apiVersion: v1
kind: Service
metadata: {name: cache-0}
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Service, metadata: {name: db2, namespace: data-tier}}
"""


def _found(text: bytes) -> list[tuple[str, str]]:
    return [(s.namespace, s.name) for s in discovery.discover_services(stream.split(text.decode()))]


def test_the_preset_adds_exactly_the_names_of_the_services() -> None:
    config = NoProxyConfig(presets=("loopback", "kubernetes", "services"))
    entries = scope.build(config)
    resolved = presets.resolve_services(entries, _found(SAFE_STREAM))
    after = resolved.entries
    added = [item.entry.text for item in after[len(entries) :]]
    assert added == ["web-front", "web-front.shop-1", "cache-0", "db2", "db2.data-tier"]
    assert all(i.sources == ("preset services (Services of the render)",) for i in after[-5:])
    assert resolved.left_out == ()
    value = ",".join(item.entry.text for item in entries)
    tail = ",web-front,web-front.shop-1,cache-0,db2,db2.data-tier"
    assert presets.added_cost(value, value + tail) == (5, len(tail))
    assert f"3 Service(s) of the render added 5 entries, {len(tail)} bytes" in resolved.cost


def test_a_name_whose_last_label_may_be_a_top_level_domain_is_left_out() -> None:
    """Issue 27, finding 2: every client but proxy-from-env and Java reads an entry as
    the name and every name below it, so a Service ``amazonaws`` in namespace ``com``
    would send all of *.amazonaws.com direct, and a Service ``com`` all of *.com. A
    last label of letters only may be a public top-level domain: left out, with a
    warning; a last label with a digit or a hyphen never is one."""
    config = NoProxyConfig(presets=("loopback", "kubernetes", "services"))
    entries = scope.build(config)
    services = [("com", "amazonaws"), ("kube-system", "com"), ("", "xn--p1ai"), ("io", "a-1")]
    resolved = presets.resolve_services(entries, services)
    added = [item.entry.text for item in resolved.entries[len(entries) :]]
    assert added == ["com.kube-system", "a-1"]
    value = ",".join(item.entry.text for item in resolved.entries)
    for host in ("s3.amazonaws.com", "amazonaws.com", "evil.com", "x.xn--p1ai", "x.a-1.io"):
        dest = clients.parse_destination(f"https://{host}/")
        assert not any(clients.decide_all(value, dest).values()), host
    # one warning names every form left out, and the lines to add to the profile
    assert len(resolved.left_out) == 1
    (left,) = resolved.left_out
    assert "5 form(s) of Service names left out" in left
    for form, label in (
        ("amazonaws", "com/amazonaws"),
        ("amazonaws.com", "com/amazonaws"),
        ("com", "kube-system/com"),
        ("xn--p1ai", "xn--p1ai"),
        ("a-1.io", "io/a-1"),
    ):
        assert f"{form} (Service {label})" in left
    assert left.endswith("add to spec.noProxy: amazonaws, amazonaws.com, com, xn--p1ai, a-1.io")
    # a form the list already holds is not lost: the kubernetes preset lists these
    kept = presets.resolve_services(entries, [("default", "kubernetes")])
    assert kept.left_out == ()


def test_the_stream_names_nothing_the_preset_would_widen(tmp_path: Path) -> None:
    """The shared STREAM's names are all letters: the preset writes none of them, and
    --strict makes the warning an error."""
    profile = _profile(tmp_path, "loopback, kubernetes, services")
    proc = run_cli(["noproxy", profile, "--stream", "-"], STREAM)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode().strip().endswith(",.cluster.local")
    render = run_cli([profile, "--report"], STREAM)
    assert render.returncode == 0, render.stderr
    assert b"web (Service shop/web), web.shop (Service shop/web)" in render.stderr
    assert b"[noproxy/service-name]" in render.stderr
    assert render.stderr.count(b"[noproxy/service-name]") == 1
    strict = run_cli([profile, "--strict"], STREAM)
    assert strict.returncode == 1
    # the one error names every form, so one edit of the profile fixes the run
    assert b"web (Service shop/web), web.shop (Service shop/web)" in strict.stderr
    assert b"[noproxy/service-name; --strict]" in strict.stderr


def test_the_warning_names_every_form_up_to_a_bound() -> None:
    """Many Services give one warning, which names the first forms and how many
    more there are, and stays one line."""
    config = NoProxyConfig(presets=("loopback", "kubernetes", "services"))
    services = [("monitoring", f"svc{i}x") for i in range(100)]
    resolved = presets.resolve_services(scope.build(config), services)
    (left,) = resolved.left_out
    assert "100 form(s) of Service names left out" in left
    # the names themselves hold a digit, so only NAME.monitoring is left out
    assert "svc39x.monitoring (Service monitoring/svc39x)" in left
    assert "svc40x.monitoring" not in left
    assert "and 60 more (noproxy --explain --stream lists them all)" in left
    assert "\n" not in left


def test_the_preset_is_off_by_default(tmp_path: Path) -> None:
    assert presets.SERVICES not in presets.DEFAULT_PRESETS
    proc = run_cli(["noproxy", _profile(tmp_path, "loopback, kubernetes"), "--stream", "-"], STREAM)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode().strip().split(",")[-1] == ".cluster.local"


def test_noproxy_with_the_preset_states_its_cost(tmp_path: Path) -> None:
    profile = _profile(tmp_path, "loopback, kubernetes, services")
    proc = run_cli(["noproxy", profile, "--stream", "-"], SAFE_STREAM)
    assert proc.returncode == 0, proc.stderr
    tail = ",web-front,web-front.shop-1,cache-0,db2,db2.data-tier"
    assert proc.stdout.decode().strip().endswith(".cluster.local" + tail)
    explained = run_cli(["noproxy", profile, "--explain", "--stream", "-"], SAFE_STREAM)
    text = explained.stdout.decode()
    size = len(tail)
    assert f"note: preset services: 3 Service(s) of the render added 5 entries, {size} bytes" in (
        text
    )
    assert f"({2 * size} bytes of environment with no_proxy)" in text
    left = run_cli(["noproxy", profile, "--explain", "--stream", "-"], STREAM)
    assert "warning: preset services: 5 form(s) of Service names left out" in (left.stdout.decode())


def test_a_profile_naming_the_preset_loads_without_a_stream(tmp_path: Path) -> None:
    profile = _profile(tmp_path, "services")
    proc = run_cli(["noproxy", profile], b"")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode().strip() == ""


def test_a_render_with_the_preset_gets_the_names_and_reports_the_cost() -> None:
    case = GOLDEN / "noproxy-services-preset"
    args = [str(case / "profile.yaml"), "--namespace", "shop", "--report"]
    proc = run_cli(args, (case / "input.yaml").read_bytes())
    assert proc.returncode == 0, proc.stderr
    no_proxy = re.search(rb'name: NO_PROXY\n\s+value: "?([^"\n]+)', proc.stdout)
    assert no_proxy is not None
    entries = no_proxy.group(1).decode().split(",")
    assert entries[-2:] == ["web-front", "cache.data-tier"]
    assert "web-front.shop" not in entries and "cache" not in entries
    assert b"preset services: 2 Service(s) of the render added 2 entries" in proc.stderr
    assert b"web-front.shop (Service shop/web-front)" in proc.stderr
    assert b"add to spec.noProxy: web-front.shop" in proc.stderr


def test_without_the_preset_the_services_are_not_read() -> None:
    from proxy_postrender import engine
    from proxy_postrender.request import Request

    env = (("HTTP_PROXY", "http://p:1"), ("NO_PROXY", "localhost"))
    plain = Request(env=env, no_proxy=NoProxyConfig())
    assert not engine._services_preset(plain)
    # (the stream is read twice all the same: the ConfigMaps and Secrets a workload's
    # envFrom names come first, pods/envfrom.py)
    assert engine.needs_two_passes(plain) and engine._reads_env_sources(plain)
    with_preset = NoProxyConfig(presets=("loopback", "services"))
    assert engine.needs_two_passes(Request(env=env, no_proxy=with_preset))
    # a removal does not read the Services (it reads the stream twice all the same: the
    # references of renamed templates go back to their names, rollout/ledger.py)
    removal = Request(env=(), no_proxy=with_preset)
    assert not engine._services_preset(removal) and engine.needs_two_passes(removal)
