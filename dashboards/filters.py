"""Filters shared by every page: chosen once in the sidebar, kept in st.session_state across pages
and in the URL (`?models=mlp,cnn&labels=mode=train`), so a filtered view can be shared."""

from __future__ import annotations

import streamlit as st

from inductor_warehouse.dashboards import cells, data, state, warehouse

# query parameter -> (filter_options facet, sidebar label)
FACETS = {
    "compilers": ("compiler_version", "Compiler versions"),
    "models": ("model", "Models"),
    "devices": ("device", "Devices"),
    "labels": ("label", "Labels"),
}


def sidebar() -> None:
    options = data.run("dashboard/filter_options")
    with st.sidebar:
        st.caption(f"Warehouse: `{warehouse.location().printable}`")
        st.subheader("Filters")
        for param, (facet, label) in FACETS.items():
            values = options.loc[options["facet"] == facet, "value"].tolist()
            state.from_url(f"filter_{param}", param, values, many=True)
            chosen = st.multiselect(label, values, key=f"filter_{param}", placeholder="all",
                                    help="Labels: one key picks any of its values; several keys must all match."
                                    if param == "labels" else None)
            state.to_url(param, chosen)
        if any(st.session_state.get(f"filter_{p}") for p in FACETS):
            st.button("Clear filters", on_click=clear)


def clear() -> None:
    for param in FACETS:
        st.session_state[f"filter_{param}"] = []


def current() -> dict:
    """The filters as canned-query parameters: comma-separated values, None for 'all'."""
    return {p: ",".join(st.session_state.get(f"filter_{p}") or []) or None for p in FACETS}


def describe() -> str:
    """The filters in words, escaped for the markdown elements that show them."""
    chosen = [f"{FACETS[p][1].lower()}: {cells.plain(v)}" for p, v in current().items() if v]
    return "; ".join(chosen) if chosen else "all runs"
