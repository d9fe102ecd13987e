"""Keeping an API key out of what discogym prints and stores.

An endpoint may echo the key in an error, and a model may repeat it in a reply (a gateway that puts it in
the conversation, say). :class:`Redactor` replaces each of its forms by ``[key]``:

- a key of :data:`MIN_ANYWHERE` characters or more wherever it occurs: in any letter case, with spaces
  or line breaks between its characters, percent-encoded, and base64-encoded (alone or inside a longer
  base64 text, such as an ``Authorization: Basic`` header);
- a shorter key only where it stands as a whole word (no letter or digit touching it), in any letter
  case, with single spaces between its characters, or base64-encoded as a whole word: replacing every
  occurrence of a two-letter key would deface the text around it.
"""

import base64
import re
from urllib.parse import quote

REDACTED = "[key]"
MIN_ANYWHERE = 8
_EDGE = r"[A-Za-z0-9]"
_BASE64_CHAR = r"[A-Za-z0-9+/_-]"


class Redactor:
    """Removes one API key, in the forms listed in the module's description, from texts."""

    def __init__(self, key: str) -> None:
        self._pattern = _pattern(key) if key else None

    def __call__(self, text: str) -> str:
        """``text`` with every form of the key replaced by ``[key]``."""
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(REDACTED, text)


def _pattern(key: str) -> re.Pattern[str]:
    if len(key) < MIN_ANYWHERE:
        spaced = r"\s?".join(re.escape(char) for char in key)
        alone = base64.b64encode(key.encode("utf-8")).decode("ascii").rstrip("=")  # the key encoded by itself
        encoded = [re.escape(form) + "=*" for form in _ordered({alone, _urlsafe(alone)})]
        return re.compile(rf"(?<!{_EDGE})(?:(?i:{spaced})|{'|'.join(encoded)})(?!{_EDGE})")
    spaced = r"\s*".join(re.escape(char) for char in key)
    literal = re.escape(quote(key, safe=""))
    # A base64 form also takes the character on each side that mixes the key's bits with its neighbours'.
    encoded = [f"{_BASE64_CHAR}?{re.escape(form)}{_BASE64_CHAR}?=*" for form in _ordered(_base64_forms(key))]
    return re.compile("|".join([f"(?i:{spaced})", literal, *encoded]))


def _ordered(forms: set[str]) -> list[str]:
    """Longest first (so a match is not cut short by a shorter form), then in text order: a fixed order."""
    return sorted(forms, key=lambda form: (-len(form), form))


def _urlsafe(encoded: str) -> str:
    return encoded.replace("+", "-").replace("/", "_")


def _base64_forms(key: str) -> set[str]:
    """The base64 (standard and URL-safe) of the key, as it reads at each of the three alignments it can
    have inside a longer base64 text: only the characters that depend on the key's bytes alone."""
    data = key.encode("utf-8")
    forms = set()
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + data).decode("ascii")
        first = -(-8 * offset // 6)  # the first character whose bits are all the key's
        last = (8 * (offset + len(data))) // 6  # one past the last such character
        core = encoded[first:last]
        if core:
            forms.update({core, _urlsafe(core)})
    return forms
