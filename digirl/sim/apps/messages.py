"""Messages: conversations, a new chat with a recipient picker, and threads where a sent text stays."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial

from digirl.sim import ui
from digirl.sim.apps.base import App, app_bar, fab, person_row
from digirl.sim.device import find_contacts

__all__ = ["Messages", "Msg"]

_INBOX = (
    "See you at 6!",
    "Thanks 🙂",
    "Can you call me?",
    "Your code is 482913",
    "On my way",
    "Sounds good",
    "Happy birthday!",
    "Where are you?",
)


@dataclass
class Msg:
    text: str
    outgoing: bool
    #: Sent during this episode (not part of the initial state).
    new: bool = False


class Messages(App, key="messages", label="Messages", icon="message", color=(26, 115, 232)):
    def init_state(self) -> None:
        #: Conversation name (a contact's name, else a number) → messages, oldest first.
        self.threads: dict[str, list[Msg]] = {c.name: [Msg(t, False)] for c, t in zip(self.phone.contacts[:8], _INBOX)}
        self.order: list[str] = list(self.threads)
        self.page = "list"  # list | new | thread
        self.current = ""

    def screen(self) -> str:
        return "conversations" if self.page == "list" else self.page

    def state(self) -> dict[str, object]:
        sent = {k: [m.text for m in v if m.new] for k, v in self.threads.items() if any(m.new for m in v)}
        return {"screen": self.page, "thread": self.current, "sent": sent}

    def keyboard_action(self) -> str:
        return "send" if self.focused == "compose" else "enter"

    def back(self) -> bool:
        if self.page == "list":
            return False
        self.page = "list"
        self.blur()
        return True

    def new_chat(self) -> None:
        self.page = "new"
        self.fields["to"] = ""
        self.focus("to")

    def open_thread(self, name: str) -> None:
        self.threads.setdefault(name, [])
        if name in self.order:
            self.order.remove(name)
        self.order.insert(0, name)
        self.current, self.page = name, "thread"
        self.fields["compose"] = ""
        self.focus("compose")

    def send(self) -> None:
        text = self.fields.get("compose", "").strip()
        if self.page == "thread" and text:
            self.threads[self.current].append(Msg(text, True, new=True))
            self.fields["compose"] = ""

    def recipients(self) -> list[tuple[str, str]]:
        """(conversation name, subtitle) suggestions for what is typed in "To"."""
        typed = self.fields.get("to", "").strip()
        out = [(c.name, c.number) for c in find_contacts(self.phone.contacts, typed)][:6]
        digits = re.sub(r"\D", "", typed)
        if len(digits) >= 3 and re.fullmatch(r"[\d\s().+\-]+", typed):
            out.insert(0, (digits, "Send to this number"))
        return out

    def submit(self, name: str) -> None:
        if name == "to":
            sugg = self.recipients()
            if sugg:
                self.open_thread(sugg[0][0])
        elif name == "compose":
            self.send()

    # ---------------------------------------------------------------- views
    def build(self) -> list[ui.View]:
        if self.page == "new":
            return self._new()
        if self.page == "thread":
            return self._thread()
        rows = []
        for i, name in enumerate(self.order):
            last = self.threads[name][-1].text if self.threads[name] else ""
            rows.append(
                person_row(
                    76.0 * i, 76, name, sub=last, ref=f"messages.thread.{i}", on_tap=partial(self.open_thread, name), size=44
                )
            )
        return self.list_page(
            "messages",
            56,
            rows,
            app_bar("Messages", ref="messages.bar"),
            fab("message", self.new_chat, ref="messages.new", desc="Start chat", text="Start chat"),
        )

    def _new(self) -> list[ui.View]:
        views: list[ui.View] = [
            ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.WHITE),
            app_bar("New conversation", back=self.phone.key_back, ref="messages.newbar"),
        ]
        views.append(
            self.text_input(
                (12, ui.TOP + 64, 348, ui.TOP + 112),
                "to",
                placeholder="To: type a name or number",
                ref="messages.to",
                icon="person",
            )
        )
        for i, (name, sub) in enumerate(self.recipients()):
            y = ui.TOP + 120 + 64 * i
            views.append(person_row(y, 64, name, sub=sub, ref=f"messages.to.sugg.{i}", on_tap=partial(self.open_thread, name)))
        return views

    def _thread(self) -> list[ui.View]:
        msgs = self.threads.get(self.current, [])
        rows: list[ui.View] = []
        y = 8.0
        for i, m in enumerate(msgs):
            w = min(260, 24 + 8 * len(m.text))
            x0 = 348 - w if m.outgoing else 12
            bubble = ui.box(
                (x0, y, x0 + w, y + 44), ui.LIGHT_BLUE if m.outgoing else (241, 243, 244), radius=18, ref=f"messages.msg.{i}"
            )
            bubble.children.append(ui.label((x0 + 12, y, x0 + w - 8, y + 44), m.text, size=14))
            rows.append(bubble)
            y += 52
        views: list[ui.View] = [
            ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.WHITE),
            ui.scroll_list("messages.thread", (0, ui.TOP + 56, 360, ui.BOTTOM - 64), rows, {"messages.thread": 1e9}),
            app_bar(self.current, back=self.phone.key_back, ref="messages.thread.bar"),
        ]
        text = self.fields.get("compose", "")
        bar = ui.box((0, ui.BOTTOM - 64, 360, ui.BOTTOM), ui.WHITE, blocker=True)
        bar.children.append(ui.box((0, ui.BOTTOM - 64, 360, ui.BOTTOM - 63), ui.FAINT))
        bar.children.append(
            self.text_input(
                (12, ui.BOTTOM - 56, 296, ui.BOTTOM - 8),
                "compose",
                placeholder="Text message",
                ref="messages.compose",
                clear=False,
                icon="",
                filled=True,
            )
        )
        bar.children.append(
            ui.icon_button(
                (304, ui.BOTTOM - 56, 352, ui.BOTTOM - 8),
                "send",
                self.send if text.strip() else None,
                ref="messages.send",
                desc="Send",
                color=ui.BLUE if text.strip() else ui.SUBTLE,
            )
        )
        views.append(bar)
        return views
