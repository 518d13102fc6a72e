"""Contacts: a searchable list, a contact's page (call, text) and a form to create one; with the newer
surfaces (``phone.surfaces``) also favourites: a star on a contact's page and an All / Favourites tab
row over the list."""

from __future__ import annotations

import re
from functools import partial

from digirl.sim import ui
from digirl.sim.apps.base import App, avatar, fab, person_row, tab_label
from digirl.sim.device import Contact, find_contacts

__all__ = ["Contacts"]


class Contacts(App, key="contacts", label="Contacts", icon="person", color=(26, 115, 232)):
    def init_state(self) -> None:
        self.page = "list"  # list | detail | edit
        self.shown: Contact | None = None
        self.error = ""
        #: Starred contacts (names) and the list's tab (All / Favourites), with the newer surfaces.
        self.favorites: list[str] = []
        self.tab = "All"
        #: The contact the editor changes (None: it creates one); newer surfaces.
        self.editing: Contact | None = None

    def screen(self) -> str:
        return "contacts" if self.page == "list" else self.page

    def state(self) -> dict[str, object]:
        return {"screen": self.page, "contact": self.shown.name if self.shown else None, "count": len(self.phone.contacts)}

    def keyboard_action(self) -> str:
        return "search" if self.focused == "q" else "enter"

    def back(self) -> bool:
        if self.page != "list":
            self.page = "list"
            self.blur()
            return True
        return self.clear_query()

    def show(self, c: Contact) -> None:
        self.shown, self.page = c, "detail"
        self.blur()

    def create(self) -> None:
        self.page, self.error, self.editing = "edit", "", None
        for f in ("name", "number", "email"):
            self.fields[f] = ""
        self.focus("name")

    def edit(self, c: Contact) -> None:
        """The editor on an existing contact (its fields filled in)."""
        self.page, self.error, self.editing = "edit", "", c
        self.fields.update(name=c.name, number=c.number, email=c.email)
        self.blur()

    def delete(self, c: Contact) -> None:
        self.phone.contacts = [x for x in self.phone.contacts if x is not c]
        self.favorites = [n for n in self.favorites if n != c.name]
        self.shown, self.page = None, "list"

    def save(self) -> None:
        name = re.sub(r"\s+", " ", self.fields.get("name", "")).strip()
        if not name:
            self.error = "Enter a name"
            return
        c = Contact(name, re.sub(r"\D", "", self.fields.get("number", "")), self.fields.get("email", "").strip())
        if self.editing is not None and self.editing in self.phone.contacts:
            self.phone.contacts[self.phone.contacts.index(self.editing)] = c
        else:
            self.phone.contacts.append(c)
        self.editing = None
        self.show(c)

    def submit(self, name: str) -> None:
        order = ("name", "number", "email")
        if name in order[:-1]:
            self.focus(order[order.index(name) + 1])
        elif name == "email":
            self.save()
        elif name == "q":
            hits = find_contacts(self.phone.contacts, self.fields.get("q", ""))
            if len(hits) == 1:
                self.show(hits[0])
            self.blur()

    def toggle_favorite(self, c: Contact) -> None:
        if c.name in self.favorites:
            self.favorites.remove(c.name)
        else:
            self.favorites.append(c.name)

    def select_tab(self, tab: str) -> None:
        self.tab = tab
        self.phone.scroll.pop("contacts", None)

    def _call(self, c: Contact) -> None:
        dialer = self.phone.apps["phone"]
        self.phone.launch("phone")
        dialer.call_contact(c)  # type: ignore[attr-defined]

    def _text(self, c: Contact) -> None:
        msgs = self.phone.apps["messages"]
        self.phone.launch("messages")
        msgs.open_thread(c.name)  # type: ignore[attr-defined]

    # ---------------------------------------------------------------- views
    def build(self) -> list[ui.View]:
        if self.page == "detail" and self.shown is not None:
            return self._detail(self.shown)
        if self.page == "edit":
            return self._edit()
        rows = []
        shown = find_contacts(self.phone.contacts, self.fields.get("q", ""))
        favs = self.phone.surfaces and self.tab == "Favourites"
        if favs:
            shown = [c for c in shown if c.name in self.favorites]
        for i, c in enumerate(shown):
            rows.append(person_row(64.0 * i, 64, c.name, ref=f"contacts.row.{i}", on_tap=partial(self.show, c)))
        if not rows:
            empty = "No favourites yet" if favs else "No contacts found"
            rows.append(ui.label((16, 16, 344, 48), empty, size=15, fg=ui.SUBTLE, ref="contacts.none"))
        head_h = 104 if self.phone.surfaces else 64
        head = ui.box((0, ui.TOP, 360, ui.TOP + head_h), ui.WHITE, blocker=True)
        head.children.append(
            self.text_input(
                (12, ui.TOP + 8, 348, ui.TOP + 56), "q", placeholder="Search contacts", ref="contacts.search", filled=True
            )
        )
        if self.phone.surfaces:
            for i, tab in enumerate(("All", "Favourites")):
                x = 16 + 120 * i
                head.children.append(
                    tab_label(
                        (x, ui.TOP + 62, x + 112, ui.TOP + 100),
                        tab,
                        tab == self.tab,
                        ui.BLUE,
                        ref=f"contacts.tab.{tab.lower()}",
                        on_tap=partial(self.select_tab, tab),
                        element=True,
                    )
                )
        return self.list_page("contacts", head_h, rows, head, fab("plus", self.create, ref="contacts.add", desc="Create contact"))

    def _detail(self, c: Contact) -> list[ui.View]:
        views = self.form_page("", ref="contacts.detail")
        views.append(avatar(130, ui.TOP + 70, c.name, 100))
        views.append(ui.label((0, ui.TOP + 180, 360, ui.TOP + 220), c.name, size=26, align="center", ref="contacts.detail.name"))
        if self.phone.surfaces:
            starred = c.name in self.favorites
            views.append(
                ui.icon_button(
                    (300, ui.TOP + 8, 348, ui.TOP + 56),
                    "star",
                    partial(self.toggle_favorite, c),
                    ref="contacts.detail.star",
                    desc="Remove from favourites" if starred else "Add to favourites",
                    color=(251, 188, 4) if starred else ui.TEXT,
                )
            )
            for x, icon, fn, what in ((204, "edit", self.edit, "Edit contact"), (252, "trash", self.delete, "Delete contact")):
                views.append(
                    ui.icon_button(
                        (x, ui.TOP + 8, x + 48, ui.TOP + 56), icon, partial(fn, c), ref=f"contacts.detail.{icon}", desc=what,
                        color=ui.TEXT,
                    )
                )  # fmt: skip
        for i, (icon, text, fn) in enumerate(
            (("phone", "Call", partial(self._call, c)), ("message", "Text", partial(self._text, c)))
        ):
            x = 70 + 130 * i
            views.append(
                ui.button(
                    (x, ui.TOP + 240, x + 90, ui.TOP + 284),
                    text,
                    fn,
                    ref=f"contacts.detail.{text.lower()}",
                    style="tonal",
                    icon=icon,
                )
            )
        num = c.number
        pretty = f"({num[:3]}) {num[3:6]}-{num[6:]}" if len(num) == 10 else (num or "No phone number")
        views.append(
            ui.list_row(
                ui.TOP + 310,
                72,
                pretty,
                sub="Mobile",
                icon="phone",
                icon_color=ui.BLUE,
                ref="contacts.detail.number",
                on_tap=partial(self._call, c),
            )
        )
        views.append(
            ui.list_row(
                ui.TOP + 382, 72, c.email or "No email", sub="Email", icon="mail", icon_color=ui.BLUE, ref="contacts.detail.email"
            )
        )
        return views

    def _edit(self) -> list[ui.View]:
        views = self.form_page(
            "Edit contact" if self.editing is not None else "Create contact", ref="contacts.edit", save=self.save
        )
        for i, (f, ph, icon) in enumerate((("name", "Name", "person"), ("number", "Phone", "phone"), ("email", "Email", "mail"))):
            y = ui.TOP + 76 + 64 * i
            views.append(self.text_input((16, y, 344, y + 52), f, placeholder=ph, ref=f"contacts.edit.{f}", icon=icon, radius=8))
        if self.error:
            views.append(
                ui.label((16, ui.TOP + 272, 344, ui.TOP + 296), self.error, size=13, fg=(217, 48, 37), ref="contacts.edit.error")
            )
        return views
