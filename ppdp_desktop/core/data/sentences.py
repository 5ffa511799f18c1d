"""Sentences that end with a name the user chose: a column named ``Patienten-Nr.`` ends its sentence with its
own full stop, not with ``Patienten-Nr..``."""
from __future__ import annotations


def full_stop(text: str) -> str:
    """``text`` ended by one full stop: unchanged when it ends with one already (a name such as ``Nr.``).

    Parameters
    ----------
    text : str
        A sentence without its closing full stop, often ending with a column name.
    """
    return text if text.endswith(".") else text + "."
