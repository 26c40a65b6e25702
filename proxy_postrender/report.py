"""Human-readable summary of what a run changed (``--report``)."""

from __future__ import annotations

from proxy_postrender.engine import ObjectReport, Result


def _object_name(report: ObjectReport) -> str:
    ctx = report.context
    name = ctx.kind or "object"
    if ctx.name:
        name += " " + (f"{ctx.namespace}/{ctx.name}" if ctx.namespace else ctx.name)
    if ctx.source:
        name += f" ({ctx.source})"
    return name


def _per_container(label: str, entries: dict[str, list[str]]) -> list[str]:
    return [f"    {label} {container}: {', '.join(names)}" for container, names in entries.items()]


def _mixed_pairs(plan_kept: dict[str, list[str]], plan_injected: dict[str, list[str]]) -> list[str]:
    """Warn where a container keeps one case of a variable and gets the other from the profile."""
    lines = []
    for container, kept in plan_kept.items():
        injected = set(plan_injected.get(container, []))
        for var in kept:
            twin = var.lower() if var.isupper() else var.upper()
            if twin in injected:
                lines.append(
                    f"    warning {container}: {var} comes from the manifest but {twin} from the "
                    "profile; clients reading the other case may use a different proxy"
                )
    return lines


def render(result: Result, *, removing: bool = False) -> str:
    changed = result.changed
    unchanged = [o for o in result.objects if o.method == "unchanged"]
    lines = [
        f"proxy-postrender: {result.documents} documents, {len(result.objects)} workloads "
        f"({len(changed)} changed, {len(unchanged)} unchanged), "
        f"{result.passed_through} other documents passed through"
        + (" [remove]" if removing else "")
    ]
    for report in result.objects:
        plan = report.plan
        status = "changed" if report.method != "unchanged" else "unchanged"
        via = " via round-trip dump" if report.method == "roundtrip" else ""
        lines.append(f"  {status} {_object_name(report)}: {plan.containers} containers{via}")
        if plan.skipped:
            lines.append(f"    skipped: {plan.skipped}")
        lines += _per_container("injected", plan.injected)
        lines += _per_container("updated", plan.updated)
        lines += _per_container("removed", plan.removed)
        lines += _per_container("overridden", plan.overridden)
        lines += _per_container("kept (set by the manifest)", plan.kept)
        lines += _mixed_pairs(plan.kept, plan.injected)
    return "\n".join(lines) + "\n"
