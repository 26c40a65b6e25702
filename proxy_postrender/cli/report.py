"""Human-readable summary of what a run changed (``--report``)."""

from __future__ import annotations

from collections.abc import Sequence

from proxy_postrender.result import ObjectReport, Result


def _object_name(report: ObjectReport) -> str:
    """Kind, name and source; a line break in them is escaped (one object, one line: the
    other control characters are escaped on the way out, see Redactor.text)."""
    ctx = report.context
    name = ctx.kind or "object"
    if ctx.name:
        name += " " + (f"{ctx.namespace}/{ctx.name}" if ctx.namespace else ctx.name)
    if ctx.source:
        name += f" ({ctx.source})"
    return name.replace("\n", "\\n")


def summary(result: Result, *, removing: bool = False, warnings: Sequence[str] = ()) -> str:
    changed = result.changed
    unchanged = [o for o in result.objects if o.method == "unchanged"]
    lines = [
        f"proxy-postrender: {result.documents} documents, {len(result.objects)} targets "
        f"({len(changed)} changed, {len(unchanged)} unchanged), "
        f"{result.passed_through} other documents passed through"
        + (" [remove]" if removing else "")
    ]
    for report in result.objects:
        plan = report.plan
        status = "changed" if report.method != "unchanged" else "unchanged"
        via = " via round-trip dump" if report.method == "roundtrip" else ""
        lines.append(f"  {status} {_object_name(report)}: {plan.summary()}{via}")
        lines += plan.describe()
    lines += [f"  warning profile: {warning}" for warning in warnings]
    lines += [f"  warning {warning}" for warning in result.warnings]
    lines += [f"  note {note}".replace("\n", "\\n") for note in result.notes]
    lines += [f"  warning {finding}".replace("\n", "\\n") for finding in result.findings]
    for kind, found in (("warning", result.no_proxy_warnings), ("note", result.no_proxy_notes)):
        scopes: dict[str, list[str]] = {}  # the same text once, with every scope it is about
        for scope, texts in found.items():
            for text in texts:
                scopes.setdefault(text, []).append(scope)
        lines += [f"  {kind} NO_PROXY ({'; '.join(s)}): {t}" for t, s in scopes.items()]
    return "\n".join(lines) + "\n"
