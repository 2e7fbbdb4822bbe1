"""`selftest.html`: the selftest's catch matrix as one self-contained page (no script, no external file), so a CI
artifact shows at a glance which fault each case caught, which fault escaped, and how to rerun one fault."""

from __future__ import annotations

import html
import shlex
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.faults.selftest import FaultOutcome, SelftestResult

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem;color:#1b1f24;background:#fff}
h1{font-size:1.3rem;margin:0 0 .4rem}
.score{font-weight:600;padding:.4rem .7rem;border-radius:4px;display:inline-block}
.ok{background:#e6f4ea;color:#14532d}.bad{background:#fde8e8;color:#7f1d1d}
table{border-collapse:collapse;width:100%;margin-top:1rem;table-layout:fixed}
th,td{border-bottom:1px solid #d8dee4;padding:.45rem .5rem;vertical-align:top;text-align:left;overflow-wrap:anywhere}
th{background:#f3f5f7;position:sticky;top:0}
col.fault{width:24%}col.caught{width:7%}col.cases{width:33%}col.first{width:22%}col.rerun{width:14%}
tr.escaped td:first-child{border-left:4px solid #b91c1c}tr.caught td:first-child{border-left:4px solid #15803d}
.desc,.models{color:#57606a;font-size:.85rem;margin-top:.2rem}
.chip{display:inline-block;margin:.1rem;padding:0 .35rem;border-radius:3px;font:12px ui-monospace,monospace}
.v-caught{background:#fee2e2;color:#7f1d1d}.v-missed{background:#eef1f4;color:#57606a}
code{font:12px ui-monospace,monospace;white-space:pre-wrap}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _chips(outcome: FaultOutcome) -> str:
    chips = []
    for case_id in outcome.cases:
        verdict, reason = outcome.case_verdicts.get(case_id, ("?", ""))
        kind = "caught" if case_id in outcome.catching else "missed"
        title = f"{case_id}: {verdict}" + (f" ({reason})" if reason else "")
        chips.append(
            f'<span class="chip v-{kind}" data-verdict="{_e(verdict)}" title="{_e(title)}">{_e(case_id)}</span>'
        )
    return "".join(chips)


def _row(outcome: FaultOutcome) -> str:
    fault = outcome.fault
    state = "caught" if outcome.caught else "escaped"
    mark = f"{len(outcome.catching)}/{len(outcome.cases)}" if outcome.caught else "<b>ESCAPED</b>"
    verdicts = ", ".join(f"{v} {n}" for v, n in sorted(outcome.verdicts.items()))
    rerun = shlex.join(["conformance", "selftest", "--fault", fault.name])
    return (
        f'<tr class="{state}" id="fault-{_e(fault.name)}" data-fault="{_e(fault.name)}">'
        f"<td><b>{_e(fault.name)}</b><div class=desc>{_e(fault.description)}</div>"
        f"<div class=models>models: {_e(fault.models)}</div>"
        f"<div class=models>expected catch: {_e(fault.caught_by)}</div></td>"
        f'<td class="mark">{mark}</td><td>{_chips(outcome)}<div class=desc>{_e(verdicts)}</div></td>'
        f"<td><code>{_e(outcome.first_divergence or '-')}</code></td><td><code>{_e(rerun)}</code></td></tr>"
    )


def render_html(result: SelftestResult) -> str:
    """The page: score, clean run (and its proxy bugs, each one a false alarm), one row per fault."""
    caught = sum(o.caught for o in result.outcomes)
    status = "ok" if result.exit_code == 0 else "bad"
    clean_bugs = "".join(f"<li><code>{_e(b.case_id)}</code>: {_e(b.reason)}</li>" for b in result.clean_bugs)
    title = f"selftest {result.run_id}{' (quick)' if result.quick else ''}"
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>",
            f"<h1>{_e(title)}</h1>",
            f'<p class="score {status}" id="score">caught {caught}/{len(result.outcomes)} faults; clean run: '
            f"{len(result.clean)} cases, {len(result.clean_bugs)} proxy bug(s); {result.duration_s:.1f} s</p>",
            f'<ul id="clean-bugs">{clean_bugs}</ul>' if clean_bugs else "",
            '<table id="catch-matrix"><colgroup><col class=fault><col class=caught><col class=cases><col class=first>'
            "<col class=rerun></colgroup>",
            "<thead><tr><th>fault</th><th>caught</th><th>cases (red: caught it)</th><th>first divergence</th>"
            "<th>rerun</th></tr></thead><tbody>",
            *(_row(o) for o in result.outcomes),
            "</tbody></table></body></html>",
            "",
        ]
    )
