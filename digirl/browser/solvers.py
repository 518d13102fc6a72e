"""Scripted MiniWoB++ solvers: read the page's DOM, return the next :class:`Action` (never touch the DOM).

Each solver is a JavaScript function body that sees ``utt`` (the instruction), ``last`` (the kind
of the previous action, or ``""``) and the helpers below, and returns a plan: ``{op: 'tap', x, y}``
(page pixels), ``{op: 'type', text}``, ``{op: 'enter'}`` or ``null`` when it does not know what to
do. :func:`solve` turns the plan into an action normalized to the task area. Taps aim at a point
where the target element is on top (``document.elementFromPoint``), so overlapping widgets
(click-test-2) do not steal the click.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from playwright.async_api import Page

from digirl.browser.actions import Region
from digirl.core.actions import Action

__all__ = ["SOLVERS", "solve"]

_HELPERS = r"""
const $$ = (sel) => Array.from(document.querySelectorAll(sel));
const visible = (el) => {
  if (!el) return false;
  const r = el.getBoundingClientRect();
  if (r.width < 1 || r.height < 1) return false;
  const cs = getComputedStyle(el);
  return cs.visibility !== 'hidden' && cs.display !== 'none';
};
const tap = (el) => {
  if (!el) return null;
  const r = el.getBoundingClientRect();
  const spots = [[.5, .5], [.3, .5], [.7, .5], [.5, .3], [.5, .7], [.2, .2], [.8, .8], [.2, .8], [.8, .2],
                 [.1, .5], [.9, .5], [.5, .1], [.5, .9]];
  for (const [fx, fy] of spots) {
    const x = r.left + fx * r.width, y = r.top + fy * r.height;
    const top = document.elementFromPoint(x, y);
    if (top && (top === el || el.contains(top))) return {op: 'tap', x: x, y: y};
  }
  return {op: 'tap', x: r.left + r.width / 2, y: r.top + r.height / 2};
};
// Tap a control's label on its words (not on the box): the element a policy can match to the
// instruction is the label's text, so demonstrations should point there. Falls back to tap(label).
const tapLabel = (label) => {
  const words = Array.from(label.childNodes).filter((n) => n.nodeType === 3 && n.textContent.trim());
  if (words.length) {
    const range = document.createRange();
    range.selectNodeContents(words[words.length - 1]);
    const r = range.getBoundingClientRect();
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    const top = document.elementFromPoint(x, y);
    if (r.width >= 1 && top && (top === label || label.contains(top))) return {op: 'tap', x: x, y: y};
  }
  return tap(label);
};
const quoted = (s) => (s.match(/"([^"]*)"/g) || []).map((q) => q.slice(1, -1));
const textOf = (el) => el.textContent.replace(/\s+/g, ' ').trim();
const byText = (sel, text) => $$(sel).find((e) => textOf(e) === text && visible(e));
// Fill one field: focus it, then type; null when it already holds the text.
const fill = (el, want) => {
  if (el.value === want) return null;
  if (document.activeElement !== el) return tap(el);
  if (el.value === '') return {op: 'type', text: want};
  return {op: 'stuck', why: 'field holds other text'};
};
const fillAll = (pairs, submit) => {
  for (const [el, want] of pairs) { const p = fill(el, want); if (p) return p; }
  return tap(submit);
};
"""

#: Task name → JS body returning a plan (success rates: ``benchmarks/throughput/bench_browser.py --solvers``).
SOLVERS: dict[str, str] = {
    "click-test": "return tap(document.getElementById('subbtn'));",
    "click-test-2": "return tap(document.getElementById('subbtn'));",
    "click-button": "return tap(byText('#area button', quoted(utt)[0]));",
    "click-button-sequence": """
        return tap(document.getElementById(buttonsPushed.length === 0 ? 'subbtn' : 'subbtn2'));""",
    "click-link": "return tap(byText('#area .alink', quoted(utt)[0]));",
    "click-dialog": "return tap(document.querySelector('.ui-dialog-titlebar button'));",
    "click-dialog-2": """
        const want = quoted(utt)[0];
        if (want === 'x') return tap(document.querySelector('.ui-dialog-titlebar button'));
        return tap(byText('.ui-dialog-buttonpane button', want));""",
    "click-tab": """
        const n = utt.match(/Tab #(\\d)/)[1];
        return tap(document.querySelector('#area ul a[href="#tabs-' + n + '"]'));""",
    "click-tab-2": """
        const want = quoted(utt)[0];
        const links = $$('#area .alink').filter((e) => textOf(e) === want);
        const shown = links.find(visible);
        if (shown) return tap(shown);
        const panel = links[0].closest('[id^="tabs-"]');
        return tap(document.querySelector('#area ul a[href="#' + panel.id + '"]'));""",
    "click-checkboxes": """
        const m = utt.match(/^Select (.*) and click Submit\\.?$/);
        const names = !m || m[1] === 'nothing' ? [] : m[1].split(', ');
        for (const label of $$('#boxes label')) {
          const box = label.querySelector('input');
          if (box.checked !== names.includes(textOf(label))) return tapLabel(label);
        }
        return tap(document.getElementById('subbtn'));""",
    "click-option": """
        const want = utt.match(/^Select (.*) and click Submit/)[1];
        const label = $$('#boxes label').find((l) => textOf(l) === want);
        const radio = label.querySelector('input');
        return radio.checked ? tap(document.getElementById('subbtn')) : tapLabel(label);""",
    "click-collapsible": """
        const open = $$('.ui-accordion-content').some(visible);
        return tap(open ? document.getElementById('subbtn') : document.querySelector('#area h3'));""",
    "click-widget": """
        const want = quoted(utt)[0];
        const w = $$('#area .widget').find((d) => d.querySelector('[data-type="' + want + '"]'));
        return tap(w.querySelector('input, textarea, button') || w);""",
    "choose-list": """
        const want = utt.match(/^Select (.*) from the list/)[1];
        const sel = document.getElementById('options');
        const cur = sel.selectedIndex >= 0 ? sel.options[sel.selectedIndex].textContent : '';
        if (cur !== want) return document.activeElement === sel ? {op: 'type', text: want} : tap(sel);
        if (last === 'type') return {op: 'enter'};
        return tap(byText('#area button', 'Submit'));""",
    "enter-password": """
        const pw = quoted(utt)[0];
        return fillAll([[document.getElementById('password'), pw], [document.getElementById('verify'), pw]],
                       document.getElementById('subbtn'));""",
    "enter-text": """
        const field = document.getElementById('tt');
        return fillAll([[field, quoted(utt)[0]]], document.getElementById('subbtn'));""",
    "enter-text-2": """
        const q = quoted(utt)[0];
        const want = utt.includes('all upper case') ? q.toUpperCase() : q.toLowerCase();
        return fillAll([[document.getElementById('tt'), want]], document.getElementById('subbtn'));""",
    "focus-text": "return tap(document.getElementById('tt'));",
    "focus-text-2": """
        const i = ['1st', '2nd', '3rd'].findIndex((p) => utt.includes(p + ' input'));
        return tap(document.getElementById('tt' + (i + 1)));""",
    "login-user": """
        const [user, pw] = quoted(utt);
        const get = (id) => document.getElementById(id);
        return fillAll([[get('username'), user], [get('password'), pw]], get('subbtn'));""",
}


def _script(task: str) -> str:
    return "({utt, last}) => {" + _HELPERS + SOLVERS[task] + "\n}"


async def solve(page: Page, task: str, region: Region, history: Sequence[Action] = ()) -> Action | None:
    """The solver's next action for the page's current state, or ``None`` (no solver / no idea)."""
    if task not in SOLVERS:
        return None
    utt = await page.evaluate("() => document.getElementById('query').textContent.replace(/\\s+/g, ' ').trim()")
    last = history[-1].kind if history else ""
    plan: Any = await page.evaluate(_script(task), {"utt": utt, "last": last})
    if not isinstance(plan, dict):
        return None
    op = plan.get("op")
    if op == "tap":
        return Action.tap(*region.to_norm(float(plan["x"]), float(plan["y"])))
    if op == "type":
        return Action.type_text(str(plan["text"]))
    if op == "enter":
        return Action.enter()
    return None
