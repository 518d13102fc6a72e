"""The Clock's alarm time picker, drawn over the alarm list (a dialog: hour and minute fields with ▲/▼,
AM/PM, Cancel and OK); the state it shows and changes is the Clock's (:class:`~digirl.sim.apps.clock.Picker`)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from digirl.sim import ui

if TYPE_CHECKING:
    from digirl.sim.apps.clock import Clock

__all__ = ["picker_view"]


def picker_view(clock: Clock) -> ui.View:
    """The alarm time picker (a dialog over the alarm list): hour and minute fields with ▲/▼, AM/PM, Cancel / OK."""
    p = clock.picker
    assert p is not None
    scrim = ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.SCRIM, blocker=True, ref="clock.picker.scrim")
    top = ui.TOP + 120
    card = ui.box((28, top, 332, top + 330), (236, 240, 250), radius=28, blocker=True, ref="clock.picker", kind="dialog")
    card.children.append(ui.label((52, top + 16, 308, top + 40), "Enter time", size=13, fg=ui.SUBTLE))
    for name, x0 in (("hour", 52), ("minute", 172)):
        foc = clock.focused == name
        field = ui.View(
            (x0, top + 96, x0 + 96, top + 168),
            kind="input",
            text=clock.fields.get(name, ""),
            ref=f"clock.picker.{name}",
            fill=ui.LIGHT_BLUE if foc else (225, 227, 236),
            radius=12,
            border=ui.BLUE if foc else None,
            size=34,
            focused=foc,
            icon="",
            on_tap=partial(clock.focus, name, select_all=True),
        )
        card.children.append(field)
        card.children.append(
            ui.icon_button(
                (x0 + 28, top + 52, x0 + 68, top + 92),
                "up",
                partial(clock._step, name, 1),
                ref=f"clock.picker.{name}.up",
                desc=f"Increase {name}",
                color=ui.TEXT,
            )
        )
        card.children.append(
            ui.icon_button(
                (x0 + 28, top + 172, x0 + 68, top + 212),
                "down",
                partial(clock._step, name, -1),
                ref=f"clock.picker.{name}.down",
                desc=f"Decrease {name}",
                color=ui.TEXT,
            )
        )
    card.children.append(ui.label((148, top + 96, 172, top + 168), ":", size=34, align="center"))
    for i, (txt, pm) in enumerate((("AM", False), ("PM", True))):
        sel = p.pm == pm
        card.children.append(
            ui.View(
                (276, top + 96 + 36 * i, 316, top + 132 + 36 * i),
                kind="button",
                text=txt,
                ref=f"clock.picker.{txt.lower()}",
                fill=(255, 218, 214) if sel else ui.WHITE,
                border=ui.FAINT,
                radius=6,
                size=12,
                align="center",
                bold=sel,
                on_tap=partial(clock.set_pm, pm),
                fg=ui.TEXT,
            )
        )
    if p.error:
        card.children.append(ui.label((52, top + 218, 308, top + 240), p.error, size=12, fg=ui.RED, ref="clock.picker.error"))
    card.children.append(ui.label((52, top + 240, 308, top + 260), "Hour      Minute", size=11, fg=ui.SUBTLE))
    card.children.append(
        ui.button((132, top + 276, 216, top + 316), "Cancel", clock.cancel, ref="clock.picker.cancel", style="text")
    )
    card.children.append(ui.button((220, top + 276, 308, top + 316), "OK", clock.confirm, ref="clock.picker.ok", style="text"))
    scrim.children.append(card)
    return scrim
