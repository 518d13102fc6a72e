"""Our device actions on a Playwright page, screenshots and the visible-element list.

Coordinates are normalized to a *region* of the page (:class:`Region`): the whole viewport for a
web app, the 160×210 task area for MiniWoB++. The mapping:

- tap → a left click at the point;
- swipe → a mouse-wheel scroll when the gesture starts over an element that can scroll along the
  swipe's main axis (the finger moving up scrolls the content down, by the finger's distance);
  otherwise a mouse drag (press, move in steps, release) — what drag-and-drop and sliders need;
- TYPE → keyboard typing into the focused element; PRESS_ENTER → the Enter key;
- PRESS_BACK / PRESS_HOME → decided by the env (history back / the start page for web apps);
- STATUS_TASK_* → nothing on the page (the env ends the episode).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image
from playwright.async_api import Page

from digirl.core.actions import Action, ActionType
from digirl.core.types import UIElement

__all__ = ["ELEMENTS_JS", "Region", "apply_pointer_or_key", "elements_from_js", "frame_from_bytes"]

#: Steps of the pointer path of a drag (enough for drag handlers that sample mousemove).
DRAG_STEPS = 8


@dataclass(frozen=True)
class Region:
    """A rectangle of the page in CSS pixels that normalized coordinates refer to."""

    x: float
    y: float
    width: float
    height: float

    def to_page(self, p: tuple[float, float]) -> tuple[float, float]:
        return (self.x + p[0] * self.width, self.y + p[1] * self.height)

    def to_norm(self, x: float, y: float) -> tuple[float, float]:
        nx = (x - self.x) / self.width
        ny = (y - self.y) / self.height
        return (min(1.0, max(0.0, nx)), min(1.0, max(0.0, ny)))


# Does the element under (x, y), or an ancestor, scroll along the gesture's main axis?
_SCROLLABLE_JS = """([x, y, vertical]) => {
  let el = document.elementFromPoint(x, y);
  const root = document.scrollingElement || document.documentElement;
  while (el) {
    const cs = getComputedStyle(el);
    const ov = vertical ? cs.overflowY : cs.overflowX;
    const room = vertical ? el.scrollHeight - el.clientHeight : el.scrollWidth - el.clientWidth;
    if (room > 1 && (ov === 'auto' || ov === 'scroll' || el === root)) return true;
    el = el.parentElement;
  }
  return false;
}"""


async def apply_pointer_or_key(page: Page, action: Action, region: Region) -> dict[str, Any]:
    """Perform a tap, swipe, TYPE or PRESS_ENTER on ``page``. Returns facts for the step's info."""
    if action.type is ActionType.DUAL_POINT:
        assert action.touch is not None and action.lift is not None
        x0, y0 = region.to_page(action.touch)
        if action.is_tap:
            await page.mouse.click(x0, y0)
            return {}
        x1, y1 = region.to_page(action.lift)
        dx, dy = x1 - x0, y1 - y0
        if await page.evaluate(_SCROLLABLE_JS, [x0, y0, abs(dy) >= abs(dx)]):
            await page.mouse.move(x0, y0)
            await page.mouse.wheel(-dx, -dy)
            return {"gesture": "scroll"}
        await page.mouse.move(x0, y0)
        await page.mouse.down()
        await page.mouse.move(x1, y1, steps=DRAG_STEPS)
        await page.mouse.up()
        return {"gesture": "drag"}
    if action.type is ActionType.TYPE:
        await page.keyboard.type(action.text)
        return {}
    if action.type is ActionType.PRESS_ENTER:
        await page.keyboard.press("Enter")
        return {}
    raise ValueError(f"{action.kind} is not a pointer or key action")


def frame_from_bytes(data: bytes, width: int, height: int) -> np.ndarray:
    """Decode a screenshot to uint8 H×W×3, resized (bilinear) to ``width``×``height`` if needed."""
    with Image.open(io.BytesIO(data)) as im:
        rgb = im.convert("RGB")
        if rgb.size != (width, height):
            rgb = rgb.resize((width, height), Image.Resampling.BILINEAR)
        return np.asarray(rgb, dtype=np.uint8)


# Visible elements worth showing a policy: interactive ones and those with their own text.
# Returns a JSON string of [x0, y0, x1, y1, text, kind, clickable, focused, ref] rows in page pixels:
# one string is cheaper to ship than Playwright's value-by-value serialization (measured ~0.5 ms
# less Python CPU per call).
ELEMENTS_JS = """([rx, ry, rw, rh, limit]) => {
  const out = [];
  const active = document.activeElement;
  const INPUT_KINDS = {checkbox: 'checkbox', radio: 'radio', button: 'button', submit: 'button',
                       reset: 'button'};
  const all = document.body ? document.body.getElementsByTagName('*') : [];
  for (let i = 0; i < all.length && out.length < limit; i++) {
    const el = all[i];
    const tag = el.tagName;
    if (tag === 'SCRIPT' || tag === 'STYLE' || tag === 'BR' || tag === 'OPTION') continue;
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) continue;
    if (r.right <= rx || r.bottom <= ry || r.left >= rx + rw || r.top >= ry + rh) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility === 'hidden' || cs.display === 'none' || cs.opacity === '0') continue;
    let own = '';
    for (const n of el.childNodes) if (n.nodeType === 3) own += n.textContent;
    own = own.replace(/\\s+/g, ' ').trim();
    const role = el.getAttribute('role') || '';
    let kind = '';
    let text = own;
    if (tag === 'INPUT') {
      const t = (el.type || 'text').toLowerCase();
      kind = INPUT_KINDS[t] || 'input';
      text = kind === 'button' ? el.value : (t === 'password' ? '*'.repeat(el.value.length) : el.value)
        || el.placeholder || '';
    } else if (tag === 'TEXTAREA') { kind = 'input'; text = el.value || el.placeholder || ''; }
    else if (tag === 'SELECT') {
      kind = 'select'; text = el.selectedIndex >= 0 ? el.options[el.selectedIndex].text : '';
    }
    else if (tag === 'BUTTON' || role === 'button') { kind = 'button'; text = el.innerText.trim(); }
    else if (tag === 'A' || role === 'link' || role === 'tab') { kind = 'link'; text = el.innerText.trim(); }
    else if (tag === 'IMG' || tag === 'CANVAS' || tag === 'svg') {
      kind = 'image'; text = el.getAttribute('alt') || '';
    }
    const clickable = kind !== '' && kind !== 'image' || cs.cursor === 'pointer' || el.onclick !== null;
    if (!kind) { if (!own && !clickable) continue; kind = 'text'; }
    const ref = el.id ? '#' + el.id : tag.toLowerCase() + ':' + i;
    out.push([r.left, r.top, r.right, r.bottom, text.slice(0, 200), kind, clickable, el === active, ref]);
  }
  return JSON.stringify(out);
}"""


def elements_from_js(payload: str, region: Region) -> tuple[UIElement, ...]:
    """Turn the :data:`ELEMENTS_JS` result into :class:`UIElement` with bounds normalized to ``region``."""
    out = []
    for x0, y0, x1, y1, text, kind, clickable, focused, ref in json.loads(payload):
        a = region.to_norm(float(x0), float(y0))
        b = region.to_norm(float(x1), float(y1))
        out.append(
            UIElement(
                bounds=(a[0], a[1], b[0], b[1]),
                text=str(text),
                kind=str(kind),
                clickable=bool(clickable),
                focused=bool(focused),
                ref=str(ref),
            )
        )
    return tuple(out)
