"""The letters each language is written with, and the languages each code page is written in.

A reading of a file in a code page is plausible when the set of letters beyond ASCII it gives over the whole
sample is written by one language of that code page (:func:`languages`): a French file read as Windows-1250
gives "é č ŕ ç ę ô", which no Central European language writes; read as Windows-1252 it gives "é è à ç ê ô",
French. A file whose only such letter is "è" stays ambiguous: read as Windows-1250 it is "č", Czech.

The unit is one language, not the union of a code page's languages: every byte from 0xE0 to 0xFF reads in
Windows-1252 as a letter some Western European language writes, so the union would take any Central European
text read as Windows-1252 for Western European. A table that mixes languages (Czech and Hungarian names, French
and German ones) fits no single language in any reading and is judged as if this test did not exist; Czech and
Slovak, written side by side in one country's tables, count as one. Only well-known letters of each language
are listed (lower case).
"""
from __future__ import annotations

import codecs
from functools import lru_cache
from itertools import combinations

#: Western European languages, written in Windows-1252 / Latin-1 / Latin-9 (and the Mac and DOS Western pages)
WESTERN = {
    "French": "àâæçéèêëîïôœùûüÿ", "German": "äöüß", "Spanish": "áéíñóúü", "Portuguese": "áàâãçéêíóôõú",
    "Italian": "àèéìíîòóùú", "Catalan": "àçèéíïòóúü", "Dutch": "áéíóúàèëïöü", "Swedish": "åäöé", "Danish": "æøåé",
    "Norwegian": "æøåéèóô", "Finnish": "äöåšž", "Icelandic": "áæðéíóöúýþ", "Irish": "áéíóú", "Galician": "áéíñóúü",
    "Basque": "ñü", "Luxembourgish": "äëé", "Albanian": "çë",
}
#: Central European languages, written in Windows-1250 / Latin-2 (and the Mac and DOS Central European pages)
CENTRAL = {
    "Czech": "áčďéěíňóřšťúůýž", "Slovak": "áäčďéíĺľňóôŕšťúýž", "Polish": "ąćęłńóśźż", "Hungarian": "áéíóöőúüű",
    "Slovene": "čćđšž", "Croatian": "čćđšž", "Romanian": "ăâîșțşţ", "German": "äöüß", "Albanian": "çë",
}
BALTIC = {"Estonian": "äõöüšž", "Latvian": "āčēģīķļņšūž", "Lithuanian": "ąčęėįšųūž", "Polish": "ąćęłńóśźż",
          "German": "äöüß"}
TURKISH = {"Turkish": "çğıöşüâîû\u0307"}
CYRILLIC = {
    "Russian": "абвгдеёжзийклмнопрстуфхцчшщъыьэюя", "Ukrainian": "абвгґдеєжзиіїйклмнопрстуфхцчшщьюя",
    "Bulgarian": "абвгдежзийклмнопрстуфхцчшщъьюя", "Serbian": "абвгдђежзијклљмнњопрстћуфхцчџш",
    "Macedonian": "абвгдѓежзѕијклљмнњопрстќуфхцчџш", "Belarusian": "абвгдеёжзійклмнопрстуўфхцчшыьэюя",
}
GREEK = {"Greek": "αβγδεζηθικλμνξοπρστυφχψωάέήίόύώϊϋΐΰς"}
#: every language, for judging one word at a time
ALPHABETS = {**WESTERN, **CENTRAL, **BALTIC, **TURKISH, **CYRILLIC, **GREEK}


def _units(languages: dict[str, str], *extra: tuple[str, str]) -> tuple[tuple[str, frozenset[str]], ...]:
    return tuple((name, frozenset(letters)) for name, letters in (*languages.items(), *extra))


_CENTRAL_UNITS = _units(CENTRAL, ("Czech and Slovak", CENTRAL["Czech"] + CENTRAL["Slovak"]))
#: the languages a reading in each group of code pages may be written in: (name, letters)
FAMILIES: dict[str, tuple[tuple[str, frozenset[str]], ...]] = {
    "western": _units(WESTERN),
    "central": _CENTRAL_UNITS,
    "south-eastern": (*_CENTRAL_UNITS, *_units({k: WESTERN[k] for k in ("French", "Italian", "Irish")})),
    "baltic": _units(BALTIC),
    "turkish": _units(TURKISH, *((k, v) for k, v in WESTERN.items() if not set(v) & set("ðýþ"))),
    "cyrillic": _units(CYRILLIC),
    "greek": _units(GREEK),
}
#: the group of each code page (codec names as :func:`codecs.lookup` spells them); East Asian ones are "cjk"
_GROUPS = {
    "western": ("cp1252", "iso8859_1", "iso8859_15", "mac_roman", "cp437", "cp850"),
    "central": ("cp1250", "iso8859_2", "mac_latin2", "cp852"),
    "south-eastern": ("iso8859_16",),
    "baltic": ("cp1257", "iso8859_13"),
    "turkish": ("cp1254", "iso8859_9"),
    "cyrillic": ("cp1251", "iso8859_5", "koi8_r", "koi8_u", "cp866"),
    "greek": ("cp1253", "iso8859_7"),
    "cjk": ("cp932", "euc_jp", "gb18030", "big5", "cp949"),
}
GROUPS = {codecs.lookup(codec).name: group for group, names in _GROUPS.items() for codec in names}
#: a sign that no family writes: a reading that puts a sign among letters or a capital inside a word
NO_LETTER = "\ufffd"


def _east_asian(letter: str) -> bool:
    """Kana, CJK ideographs, Hangul, and their full-width forms (all from U+3000 on)."""
    return letter >= "\u3000" and letter != NO_LETTER


@lru_cache(maxsize=256)
def languages(letters: frozenset[str], codec: str, most: int = 3) -> tuple[str, ...] | None:
    """The fewest languages of :data:`FAMILIES` of the code page ``codec`` that together write all of ``letters``
    (lower case, beyond ASCII), at most ``most`` of them; () when there are no such letters; None when more are
    needed, or none writes some letter (or ``codec`` is not a code page known here).

    Examples
    --------
    >>> languages(frozenset("éèàçêô"), "cp1252")
    ('French',)
    >>> languages(frozenset("éčŕçęô"), "cp1250", most=1) is None
    True
    >>> languages(frozenset("čő"), "cp1250")
    ('Czech', 'Hungarian')
    """
    if not letters:
        return ()
    group = GROUPS.get(codecs.lookup(codec).name)
    if group == "cjk":
        return ("East Asian",) if all(_east_asian(ch) for ch in letters) else None
    units = [(name, alphabet) for name, alphabet in FAMILIES.get(group or "", ()) if letters & alphabet]
    for size in range(1, most + 1):
        for chosen in combinations(units, size):
            if letters <= frozenset().union(*(alphabet for _name, alphabet in chosen)):
                return tuple(name for name, _alphabet in chosen)
    return None
