"""Page state in the URL: a widget's value is read from the URL's query parameter the first time the
page draws it, and written back after each run, so a view can be shared by its address."""

from __future__ import annotations

import streamlit as st


def from_url(key: str, param: str, choices: list | None = None, many: bool = False, default=None) -> None:
    """Before the widget `key` is drawn: take its value from the URL's `param`, once (a value the
    widget has already is the user's), else `default`. Values outside `choices` are dropped: the
    warehouse may no longer hold what an old link names. The widget itself then takes no default:
    Streamlit warns of a widget given both a default and a value in session state."""
    if key in st.session_state:
        return
    values = [v for part in st.query_params.get_all(param) for v in part.split(",") if v] if many \
        else [st.query_params[param]] if param in st.query_params else []
    if choices is not None:
        values = [v for v in values if v in choices]
    if many and values:
        st.session_state[key] = values
    elif values:
        st.session_state[key] = values[0]
    elif default is not None:
        st.session_state[key] = default


def to_url(param: str, value) -> None:
    """After the widget: the URL says its value (nothing when it is empty)."""
    if value is None or value == "" or value == []:
        st.query_params.pop(param, None)
    elif isinstance(value, (list, tuple)):
        text = ",".join(str(v) for v in value)
        if st.query_params.get(param) != text:
            st.query_params[param] = text
    elif st.query_params.get(param) != str(value):
        st.query_params[param] = str(value)
