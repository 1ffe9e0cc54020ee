"""Text the server writes for the user to read, translated by the sidebar with its own catalog.

The server does not know (and need not know) the user's language: the model, the logs, the CLI and the
audit log all read English. So a user-facing string is made with ``user_text(template, *params)``: a
``UserText``, which *is* the English ``str`` (``"%1 is disabled by the administrator"`` with ``%1`` filled
in) and also remembers its template and parameters. Wire models keep such strings through validation when
the field is typed ``UserStr``, and an event or a REST reply that carries them adds a ``texts`` map
(``WithTexts``, ``texts_for``): English text → ``{id: template, params}``. The sidebar looks each string up
in that map and shows ``trans.__(id, ...params)`` from the same gettext catalog as its own strings
(``src/serverText.ts``); a string that is not in the map (a reason the user typed, a message from a library)
is shown as it came.

Templates use JupyterLab's placeholders (``%1``, ``%2``, ...) so the catalog entry is the same on both sides.
``scripts/translations.js`` extracts the first argument of every ``user_text("...")`` call under
``hdsp_agent/`` into the catalog, so that argument must be string literals (adjacent literals are joined as
Python joins them; no f-strings); ``tests/test_user_text.py`` checks that every template has a translation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Annotated, Any

from pydantic import BaseModel, Field, ValidatorFunctionWrapHandler, WrapValidator, model_validator

_PLACEHOLDER = re.compile(r"%(\d+)")


class UserText(str):
    """English text for the user that remembers the catalog template it was made from."""

    template: str
    params: tuple[str, ...]

    def __new__(cls, template: str, params: Iterable[str] = ()) -> UserText:
        values = tuple(params)

        def fill(match: re.Match[str]) -> str:
            index = int(match.group(1)) - 1
            return values[index] if 0 <= index < len(values) else match.group(0)

        made = super().__new__(cls, _PLACEHOLDER.sub(fill, template))
        made.template = template
        made.params = values
        return made

    def __reduce__(self) -> tuple[Any, ...]:
        return (UserText, (self.template, self.params))


def user_text(template: str, *params: object) -> UserText:
    """The English text of ``template`` with ``%1``, ``%2``, ... replaced by ``params``, translatable by the
    sidebar. A parameter that is itself a ``UserText`` is translated too."""
    return UserText(template, (param if isinstance(param, UserText) else str(param) for param in params))


def user_template(template: str) -> str:
    """Marks a template for the catalog where it is filled later (``UserText(template, params)``)."""
    return template


def join_texts(separator: str, texts: Iterable[str]) -> str:
    """``separator.join(texts)`` that stays translatable part by part (its template is placeholders only)."""
    parts = list(texts)
    if not any(isinstance(part, UserText) for part in parts):
        return separator.join(parts)
    if len(parts) == 1:
        return parts[0]
    template = separator.join(f"%{index}" for index in range(1, len(parts) + 1))
    return UserText(template, parts)


class TextRef(BaseModel):
    """How the sidebar translates one server string: the catalog template and what fills its placeholders."""

    id: str
    params: list[str] = Field(default_factory=list)


def _keep_user_text(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    return value if isinstance(value, UserText) else handler(value)


# A ``str`` field that keeps a ``UserText`` as it is (pydantic would otherwise copy it into a plain ``str``).
UserStr = Annotated[str, WrapValidator(_keep_user_text)]


def collect_texts(value: Any, found: dict[str, TextRef] | None = None) -> dict[str, TextRef]:
    """Every ``UserText`` in ``value`` (models, lists, dicts; parameters included), by its English text."""
    found = {} if found is None else found
    if isinstance(value, UserText):
        found.setdefault(
            str(value), TextRef(id=value.template, params=[str(param) for param in value.params])
        )
        for param in value.params:
            collect_texts(param, found)
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            if name != "texts":
                collect_texts(getattr(value, name), found)
    elif isinstance(value, Mapping):
        for item in value.values():
            collect_texts(item, found)
    elif isinstance(value, list | tuple | set):
        for item in value:
            collect_texts(item, found)
    return found


class WithTexts(BaseModel):
    """A wire model with user-facing strings: ``texts`` says how to translate each (see the module)."""

    texts: dict[str, TextRef] = Field(
        default_factory=dict,
        description="How to translate this object's user-facing strings: English text → template and params.",
    )

    @model_validator(mode="after")
    def _collect_texts(self) -> WithTexts:
        # A model read back from JSON (a replayed event) has plain strings: it keeps its stored map.
        self.texts = {**collect_texts(self), **self.texts}
        return self


def texts_for(*values: Any) -> dict[str, Any]:
    """The ``texts`` map of a REST reply built from plain dicts, as JSON."""
    found: dict[str, TextRef] = {}
    for value in values:
        collect_texts(value, found)
    return {text: ref.model_dump(mode="json") for text, ref in found.items()}
