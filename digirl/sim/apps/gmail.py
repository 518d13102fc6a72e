"""A Gmail-like mail app: inbox, folders drawer, reading an email, compose; sent mail stays in "Sent"."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from digirl.sim import ui
from digirl.sim.apps import insearch
from digirl.sim.apps.base import App, app_bar, fab, letter_tile
from digirl.sim.content import stable_rng

__all__ = ["Gmail"]

_FOLDERS = ("Inbox", "Starred", "Snoozed", "Sent", "Drafts", "Spam", "Trash")
_SENDERS = (
    "Google",
    "Amazon",
    "Alex Kim",
    "LinkedIn",
    "Maria Garcia",
    "GitHub",
    "Bank of Sim",
    "Spotify",
    "Jordan Lee",
    "Airbnb",
    "The New York Times",
    "Dropbox",
)
_SUBJECTS = (
    "Your order has shipped",
    "Security alert",
    "Lunch tomorrow?",
    "New sign-in on your account",
    "Weekly digest",
    "Invitation: Team sync",
    "Your receipt",
    "Photos from the weekend",
    "Reminder: appointment",
    "Trip confirmation",
    "Breaking news",
    "Shared folder",
)
_RED = (217, 48, 37)


@dataclass(frozen=True)
class Mail:
    """An email sent during the episode."""

    to: str
    subject: str
    body: str


class Gmail(App, key="gmail", label="Gmail", icon="mail", color=_RED, rates=True, bg=(246, 248, 252)):
    def init_state(self) -> None:
        self.folder = "Inbox"
        self.open_mail: int | None = None
        self.drawer = False
        self.compose = False
        self.sent: list[Mail] = []
        #: Mails a task put in the inbox (newest first), above the generated ones: (sender, subject, snippet, time).
        self.received: list[tuple[str, str, str, str]] = []
        #: Search in mail (:mod:`.insearch`, with ``phone.surfaces``): ("search", "") or ("results", query).
        self.search: tuple[str, str] | None = None
        #: Inbox mails deleted and starred in the episode (the newer mail view's buttons), by their row.
        self.trashed: list[tuple[str, str, str, str]] = []
        self.starred: list[tuple[str, str, str, str]] = []

    def emails(self, folder: str | None = None) -> list[tuple[str, str, str, str]]:
        f = folder or self.folder
        mine = [(f"To: {m.to}", m.subject or "(no subject)", m.body, "now") for m in reversed(self.sent)] if f == "Sent" else []
        r = stable_rng("mail", f, self.phone.dyn.salt)
        out = []
        for i in range(10 if f == "Inbox" else 4):
            s = r.choice(_SENDERS)
            out.append(
                (
                    s,
                    r.choice(_SUBJECTS),
                    "Hi! Just a quick note about this — see the details inside.",
                    f"{r.randint(1, 12)}:{r.randint(0, 59):02d} {r.choice(('AM', 'PM'))}"
                    if i < 4
                    else f"{r.choice(('Jun', 'May'))} {r.randint(1, 28)}",
                )
            )
        got = list(self.received) if f == "Inbox" else []
        if f != "Inbox" or not self.trashed:
            return mine + got + out
        return [m for m in got + out if m not in self.trashed]

    def screen(self) -> str:
        if self.compose:
            return "compose"
        if self.drawer:
            return "drawer"
        if self.open_mail is not None:
            return "email"
        if self.search is not None:
            return self.search[0]
        return "inbox" if self.folder == "Inbox" else "folder"

    def state(self) -> dict[str, object]:
        return {"screen": self.screen(), "folder": self.folder, "open": self.open_mail, "sent": [vars(m) for m in self.sent]}

    def back(self) -> bool:
        if self.compose:
            self.compose = False
        elif self.drawer:
            self.drawer = False
        elif self.open_mail is not None:
            self.open_mail = None
        elif self.search is not None:
            insearch.mail_back(self)
        elif self.folder != "Inbox":
            self.folder = "Inbox"
        else:
            return False
        self.blur()
        return True

    def keyboard_action(self) -> str:
        return "enter"

    def _pick(self, folder: str) -> None:
        self.folder = folder
        self.drawer = False
        self.open_mail = None
        self.search = None

    def build(self) -> list[ui.View]:
        if self.compose:
            return self._compose()
        if self.open_mail is not None:
            return self._read(self.open_mail)
        if self.search is not None:
            return insearch.mail_views(self)
        views = self._list()
        if self.drawer:
            views.append(self._drawer())
        return views

    def _list(self) -> list[ui.View]:
        rows: list[ui.View] = [
            ui.label(
                (16, 0, 344, 32),
                self.folder.upper() if self.folder != "Inbox" else "Primary",
                size=12,
                fg=ui.SUBTLE,
                ref="gmail.folder",
            )
        ]
        for i, (sender, subject, snippet, when) in enumerate(self.emails()):
            y = 32 + 84 * i
            row = ui.box((0, y, 360, y + 84), self.bg, ref=f"gmail.mail.{i}", on_tap=partial(self._open, i), kind="list_item")
            col = stable_rng("avatar", sender).choice(((66, 133, 244), (52, 168, 83), (251, 140, 0), (142, 36, 170)))
            row.children.append(letter_tile((12, y + 14, 52, y + 54), sender[:1], col, radius=20, size=18))
            row.children.append(ui.label((64, y + 8, 270, y + 30), sender, size=15, bold=i < 3))
            row.children.append(ui.label((272, y + 8, 348, y + 30), when, size=11, fg=ui.SUBTLE, align="right"))
            row.children.append(ui.label((64, y + 30, 348, y + 52), subject, size=13, bold=i < 3))
            row.children.append(ui.label((64, y + 52, 348, y + 74), snippet, size=13, fg=ui.SUBTLE))
            rows.append(row)
        views: list[ui.View] = [ui.scroll_list("gmail.list", (0, ui.TOP + 68, 360, ui.BOTTOM), rows, self.phone.scroll)]
        head = ui.box((0, ui.TOP, 360, ui.TOP + 68), self.bg, blocker=True)
        bar = ui.View(
            (12, ui.TOP + 10, 348, ui.TOP + 58),
            kind="input",
            placeholder="Search in mail",
            fill=(234, 238, 246),
            radius=24,
            icon="",
            ref="gmail.search",
            size=15,
            on_tap=partial(insearch.start_mail_search, self) if self.phone.surfaces else None,
        )
        bar.children.append(
            ui.icon_button(
                (16, ui.TOP + 14, 56, ui.TOP + 54),
                "menu",
                self._open_drawer,
                ref="gmail.menu",
                desc="Open navigation drawer",
                color=ui.TEXT,
            )
        )
        bar.children.append(letter_tile((300, ui.TOP + 16, 336, ui.TOP + 52), "M", (142, 36, 170), radius=18, size=15))
        head.children.append(bar)
        views.append(head)
        views.append(fab("mail", self._compose_open, ref="gmail.compose", desc="Compose", color=(194, 231, 255), text="Compose"))
        views[-1].fg = ui.TEXT
        views[-1].icon_color = ui.TEXT
        return views

    def _open_drawer(self) -> None:
        self.drawer = True

    def _compose_open(self) -> None:
        self.compose = True
        for f in ("to", "subject", "body"):
            self.fields[f] = ""
        self.focus("to")

    def _open(self, i: int) -> None:
        self.open_mail = i

    def _drawer(self) -> ui.View:
        scrim = ui.box(
            (0, ui.TOP, 360, ui.BOTTOM),
            ui.SCRIM,
            blocker=True,
            ref="gmail.drawer.scrim",
            on_tap=lambda: setattr(self, "drawer", False),
        )
        panel = ui.box((0, ui.TOP, 290, ui.BOTTOM), ui.WHITE, blocker=True, ref="gmail.drawer")
        panel.children.append(ui.label((24, ui.TOP + 12, 270, ui.TOP + 56), "Gmail", size=22, fg=_RED, bold=True))
        for i, f in enumerate(_FOLDERS):
            y = ui.TOP + 64 + 52 * i
            sel = f == self.folder
            panel.children.append(
                ui.View(
                    (8, y, 282, y + 48),
                    kind="list_item",
                    text=f,
                    ref=f"gmail.folder.{f.lower()}",
                    fill=ui.LIGHT_BLUE if sel else None,
                    radius=24,
                    bold=sel,
                    size=15,
                    on_tap=partial(self._pick, f),
                    icon="mail",
                    icon_color=ui.SUBTLE,
                )
            )
        scrim.children.append(panel)
        return scrim

    def _read(self, i: int) -> list[ui.View]:
        sender, subject, snippet, when = self.emails()[i]
        views: list[ui.View] = [
            ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.WHITE),
            app_bar(
                "",
                back=self.phone.key_back,
                ref="gmail.read.bar",
                actions=[ui.icon_button((0, 0, 1, 1), "more", None, ref="gmail.read.more", desc="More")],
            ),
        ]
        views.append(ui.label((16, ui.TOP + 64, 344, ui.TOP + 120), subject, size=21, lines=2, ref="gmail.read.subject"))
        views.append(ui.label((64, ui.TOP + 132, 300, ui.TOP + 154), sender, size=15, bold=True))
        views.append(ui.label((64, ui.TOP + 154, 300, ui.TOP + 174), f"to me · {when}", size=12, fg=ui.SUBTLE))
        views.append(
            ui.label((16, ui.TOP + 196, 344, ui.TOP + 320), snippet + " Thanks, and have a great day!", size=15, lines=5)
        )
        if self.phone.surfaces:  # the newer mail view: reply, forward, star, delete
            mail = self.emails()[i]
            for j, (label, icon, fn) in enumerate(
                (("Reply", "send", self.reply), ("Forward", "send", self.forward), ("Star", "star", self.star))
            ):
                x, text = 16 + 112 * j, "Starred" if label == "Star" and mail in self.starred else label
                views.append(
                    ui.button(
                        (x, ui.TOP + 340, x + 104, ui.TOP + 380), text, partial(fn, mail),
                        ref=f"gmail.read.{label.lower()}", style="outlined", size=13, icon=icon,
                    )
                )  # fmt: skip
            views.append(
                ui.icon_button(
                    (300, ui.TOP + 132, 344, ui.TOP + 176),
                    "trash",
                    partial(self.delete, mail),
                    ref="gmail.read.delete",
                    desc="Delete",
                )
            )
        return views

    def reply(self, mail: tuple[str, str, str, str]) -> None:
        self._compose_open()
        self.fields["to"], self.fields["subject"] = mail[0], f"Re: {mail[1]}"
        self.focus("body")

    def forward(self, mail: tuple[str, str, str, str]) -> None:
        self._compose_open()
        self.fields["subject"], self.fields["body"] = f"Fwd: {mail[1]}", f"---------- Forwarded message ---------- {mail[2]}"

    def star(self, mail: tuple[str, str, str, str]) -> None:
        if mail in self.starred:
            self.starred.remove(mail)
        else:
            self.starred.append(mail)

    def delete(self, mail: tuple[str, str, str, str]) -> None:
        self.trashed.append(mail)
        self.open_mail = None

    def _compose(self) -> list[ui.View]:
        views: list[ui.View] = [ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.WHITE)]
        views.append(
            app_bar(
                "Compose",
                back=self.phone.key_back,
                ref="gmail.compose.bar",
                actions=[ui.icon_button((0, 0, 1, 1), "send", self._send, ref="gmail.send", desc="Send", color=ui.TEXT)],
            )
        )
        for i, (f, ph) in enumerate((("to", "To"), ("subject", "Subject"), ("body", "Compose email"))):
            y = ui.TOP + 64 + 56 * i
            views.append(
                self.text_input(
                    (8, y, 352, y + 52), f, placeholder=ph, ref=f"gmail.compose.{f}", clear=False, radius=0, border=None, icon=""
                )
            )
            views.append(ui.box((16, y + 52, 344, y + 53), ui.FAINT))
        return views

    def _send(self) -> None:
        to = self.fields.get("to", "").strip()
        if not to:
            return  # Gmail refuses a mail without a recipient
        self.sent.append(Mail(to, self.fields.get("subject", "").strip(), self.fields.get("body", "").strip()))
        self.compose = False
        self.blur()

    def run_query(self, q: str) -> None:
        insearch.run_mail_query(self, q)

    def submit(self, name: str) -> None:
        if name == "q":
            self.run_query(self.fields.get("q", ""))
            return
        order = ("to", "subject", "body")
        if name in order[:-1]:
            self.focus(order[order.index(name) + 1])
