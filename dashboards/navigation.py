"""Opening a run in the Run explorer from any page."""

from __future__ import annotations

import streamlit as st

EXPLORER = "sections/explorer.py"
RUN_KEY = "explore_run"


def open_run_button(run_id: str | None, key: str) -> None:
    if run_id and st.button(f"Open run `{run_id}` in the Run explorer", key=key, type="primary"):
        st.session_state[RUN_KEY] = run_id
        st.switch_page(EXPLORER)
