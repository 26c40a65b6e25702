"""Short Service names (issue 20, item 4): ``noproxy check`` checks them, and the
opt-in ``services`` preset adds ``NAME`` and ``NAME.NAMESPACE`` of the render's Services."""

from __future__ import annotations

import re
from pathlib import Path

from proxy_postrender.noproxy import discovery, explain, presets, scope
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


def test_the_services_of_a_stream_are_found() -> None:
    assert _services() == (
        discovery.ServiceRef("shop", "web", 8080),
        discovery.ServiceRef("", "cache", 6379),
        discovery.ServiceRef("data", "db", None),
    )
    assert _services("shop")[1] == discovery.ServiceRef("shop", "cache", 6379)


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
        "web.shop (Service shop/web): via the proxy for go, curl, python, wget; add web.shop"
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


def test_the_preset_adds_exactly_the_names_of_the_services() -> None:
    config = NoProxyConfig(presets=("loopback", "kubernetes", "services"))
    entries = scope.build(config)
    found = [(s.namespace, s.name) for s in _services()]
    after, note = presets.resolve_services(entries, found)
    added = [item.entry.text for item in after[len(entries) :]]
    assert added == ["web", "web.shop", "cache", "db", "db.data"]
    assert all(i.sources == ("preset services (Services of the render)",) for i in after[-5:])
    value = ",".join(item.entry.text for item in entries)
    size = len(",web,web.shop,cache,db,db.data")
    assert presets.added_cost(value, value + ",web,web.shop,cache,db,db.data") == (5, size)
    assert f"3 Service(s) of the render added 5 entries, {size} bytes" in note


def test_the_preset_is_off_by_default(tmp_path: Path) -> None:
    assert presets.SERVICES not in presets.DEFAULT_PRESETS
    proc = run_cli(["noproxy", _profile(tmp_path, "loopback, kubernetes"), "--stream", "-"], STREAM)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode().strip().split(",")[-1] == ".cluster.local"


def test_noproxy_with_the_preset_states_its_cost(tmp_path: Path) -> None:
    profile = _profile(tmp_path, "loopback, kubernetes, services")
    proc = run_cli(["noproxy", profile, "--stream", "-"], STREAM)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode().strip().endswith(".cluster.local,web,web.shop,cache,db,db.data")
    explained = run_cli(["noproxy", profile, "--explain", "--stream", "-"], STREAM)
    text = explained.stdout.decode()
    assert "note: preset services: 3 Service(s) of the render added 5 entries, 30 bytes" in text
    assert "(60 bytes of environment with no_proxy)" in text


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
    assert entries[-4:] == ["web", "web.shop", "cache", "cache.data"]
    assert b"preset services: 2 Service(s) of the render added 4 entries" in proc.stderr


def test_without_the_preset_the_stream_is_read_once() -> None:
    from proxy_postrender import engine
    from proxy_postrender.request import Request

    env = (("HTTP_PROXY", "http://p:1"), ("NO_PROXY", "localhost"))
    assert not engine.needs_two_passes(Request(env=env, no_proxy=NoProxyConfig()))
    with_preset = NoProxyConfig(presets=("loopback", "services"))
    assert engine.needs_two_passes(Request(env=env, no_proxy=with_preset))
    assert not engine.needs_two_passes(Request(env=(), no_proxy=with_preset))
