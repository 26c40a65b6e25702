"""The MachineDeployment, MachineSet and MachinePool schemas (tests/capi/schemas/core,
from kubernetes-sigs/cluster-api@ae7ff047 core/config/crd/bases): the rollout oracle's
samples of each kind and version validate; broken ones do not."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.capi.validate import capi_errors
from tests.test_rollout_oracle import VERSIONS, machines

KINDS = ["MachineDeployment", "MachineSet", "MachinePool"]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_a_sample_validates(kind: str, version: str) -> None:
    assert capi_errors(machines(version, kind)) == []


def _bootstrap(obj: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = obj["spec"]["template"]["spec"]["bootstrap"]
    return found


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_a_broken_sample_does_not(kind: str, version: str) -> None:
    obj = machines(version, kind)
    wrong = "apiGroup" if version == "v1beta1" else "apiVersion"  # the other version's field
    _bootstrap(obj)["configRef"][wrong] = "bootstrap.cluster.x-k8s.io"
    assert any(f"'{wrong}' was unexpected" in e for e in capi_errors(obj))
    obj = machines(version, kind)
    del obj["spec"]["template"]["spec"]["clusterName"]
    assert any("'clusterName' is a required property" in e for e in capi_errors(obj))
    rollout = {"rolloutAfter": "tomorrow"} if version == "v1beta1" else {"rollout": {"after": "x"}}
    obj = copy.deepcopy(machines(version, kind))
    obj["spec"].update(rollout)
    errors = capi_errors(obj)
    assert errors and (kind == "MachineDeployment") == any("date-time" in e for e in errors)


def test_the_selector_is_defaulted_as_the_webhook_does() -> None:
    """A MachineDeployment without a selector is valid once the defaulting webhook ran
    (core/webhooks/admission/machinedeployment.go l. 99-129); a wrong selector is not."""
    obj = machines("v1beta1")
    assert "selector" not in obj["spec"]
    assert capi_errors(obj) == []
    obj["spec"]["selector"] = {"matchLabels": "a"}
    assert capi_errors(obj) != []
