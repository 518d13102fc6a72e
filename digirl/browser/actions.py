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

import base64
import io
import json
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image
from playwright.async_api import CDPSession, Page

from digirl.core.actions import Action, ActionType
from digirl.core.types import UIElement
from digirl.utils.images import resize

__all__ = [
    "ELEMENTS_JS",
    "Region",
    "apply_pointer_or_key",
    "capture",
    "elements_from_js",
    "frame_from_bytes",
    "observe_js",
]

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


# The element under (x, y), or an ancestor, that scrolls along the gesture's main axis (or null).
_SCROLLER_JS = """([x, y, vertical]) => {
  let el = document.elementFromPoint(x, y);
  const root = document.scrollingElement || document.documentElement;
  while (el) {
    const cs = getComputedStyle(el);
    const ov = vertical ? cs.overflowY : cs.overflowX;
    const room = vertical ? el.scrollHeight - el.clientHeight : el.scrollWidth - el.clientWidth;
    if (room > 1 && (ov === 'auto' || ov === 'scroll' || el === root)) return el;
    el = el.parentElement;
  }
  return null;
}"""
_SCROLL_POS_JS = "(el) => [el.scrollLeft, el.scrollTop]"
# A wheel event scrolls asynchronously (and maybe animated): wait, frame by frame, until the
# scroller has moved from where it was before the wheel and then held still for 2 frames (or did
# not move within 8 frames: it was already at its end). Resolves to whether it moved.
_SCROLL_SETTLE_JS = """(el, before) => new Promise((resolve) => {
  let last = before, still = 0, moved = false, frames = 0;
  const tick = () => {
    const p = [el.scrollLeft, el.scrollTop];
    if (p[0] !== last[0] || p[1] !== last[1]) { moved = true; still = 0; } else still++;
    last = p;
    frames++;
    if ((moved && still >= 2) || (!moved && frames >= 8) || frames >= 120) resolve(moved);
    else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})"""


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
        handle = await page.evaluate_handle(_SCROLLER_JS, [x0, y0, abs(dy) >= abs(dx)])
        try:
            scroller = handle.as_element()
            if scroller is not None:
                before = await scroller.evaluate(_SCROLL_POS_JS)
                await page.mouse.move(x0, y0)
                await page.mouse.wheel(-dx, -dy)
                moved = await scroller.evaluate(_SCROLL_SETTLE_JS, before)  # the observation shows the result
                return {"gesture": "scroll", "scrolled": bool(moved)}
        finally:
            await handle.dispose()
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


async def capture(cdp: CDPSession, region: Region, scroll: tuple[float, float], image_format: str = "png") -> bytes:
    """Screenshot of ``region`` (viewport pixels) through the DevTools session, as PNG/JPEG bytes.

    ``Page.captureScreenshot`` clips in *document* coordinates, hence the page's ``scroll`` offset.
    Compared with ``page.screenshot(clip=...)`` this skips Playwright's preparation round trips
    (caret-hiding style sheet added and removed, fonts wait, layout metrics): measured about 6 ms
    less browser + driver CPU per screenshot for the 160×210 MiniWoB area, the same pixels.
    """
    clip = {"x": region.x + scroll[0], "y": region.y + scroll[1], "width": region.width, "height": region.height, "scale": 1}
    params: dict[str, Any] = {"format": image_format, "clip": clip, "optimizeForSpeed": True}
    if image_format == "jpeg":
        params["quality"] = 80  # page.screenshot's default
    reply = await cdp.send("Page.captureScreenshot", params)
    return base64.b64decode(reply["data"])


def frame_from_bytes(data: bytes, width: int, height: int) -> np.ndarray:
    """Decode a screenshot to uint8 H×W×3, resized (bilinear) to ``width``×``height`` if needed."""
    with Image.open(io.BytesIO(data)) as im:
        rgb = im.convert("RGB")
        if rgb.size != (width, height):
            rgb = resize(rgb, (width, height), Image.Resampling.BILINEAR)
        return np.asarray(rgb, dtype=np.uint8)


# Visible elements worth showing a policy: interactive ones and those with their own text. A
# checkbox or radio button reads "on"/"off" (its checked state, as the simulator's switches do).
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
      if (kind === 'checkbox' || kind === 'radio') text = el.checked ? 'on' : 'off';  // its state, not its value
      else if (kind === 'button') text = el.value;
      else text = (t === 'password' ? '*'.repeat(el.value.length) : el.value) || el.placeholder || '';
    } else if (tag === 'TEXTAREA') { kind = 'input'; text = el.value || el.placeholder || ''; }
    else if (tag === 'SELECT') {
      kind = 'select'; text = el.selectedIndex >= 0 ? el.options[el.selectedIndex].text : '';
    }
    else if (tag === 'BUTTON' || role === 'button') { kind = 'button'; text = el.innerText.trim(); }
    else if (tag === 'A' || role === 'link' || role === 'tab') { kind = 'link'; text = el.innerText.trim(); }
    else if (tag === 'IMG' || tag === 'CANVAS' || tag === 'svg') {
      kind = 'image'; text = el.getAttribute('alt') || '';
    }
    // a <label> of a control is clickable: clicking it toggles or focuses the control
    const clickable = kind !== '' && kind !== 'image' || cs.cursor === 'pointer' || el.onclick !== null
      || (tag === 'LABEL' && el.control !== null);
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


def observe_js(probe: str | None = None, elements: bool = True) -> str:
    """One page function for everything an observation reads from the DOM besides pixels.

    Called with ``[rx, ry, rw, rh, limit]``, it returns ``[scrollX, scrollY, elements, probe]``:
    the scroll offset (for the screenshot clip), the :data:`ELEMENTS_JS` payload (``null`` without
    ``elements``, and then its text is not shipped at all) and the value of ``probe`` — a
    synchronous JS function text such as an env's reward read (or ``null``). One ``evaluate``
    instead of three saves about 0.6 ms of Python and 2–4 ms of browser + driver CPU per call avoided.
    """
    return (
        "(args) => {\n"
        f"  const elements = {ELEMENTS_JS if elements else 'null'};\n"
        f"  const probe = {probe or 'null'};\n"
        "  return [window.scrollX, window.scrollY, elements ? elements(args) : null, probe ? probe() : null];\n"
        "}"
    )
