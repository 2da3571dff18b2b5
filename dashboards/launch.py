"""`python -m inductor_warehouse.dashboards.launch run APP ...`: `streamlit run`, with the pages' HTML
telling the frontend where the server is.

Opened by a page's own URL (`/compare`), Streamlit's frontend looks for its server at
`/compare/_stcore/health` and `/compare/_stcore/host-config` before the root, and the browser logs
the two 404s as console errors on every page load. With `window.__streamlit.BACKEND_BASE_URL` set to
the server's root, it asks there alone. Streamlit reads that object when its script starts, so the
served index.html defines it first. Where Streamlit is laid out otherwise than this expects, the
command is plain `streamlit run` (the 404s come back; nothing else changes).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

SCRIPT = ("<script>window.__streamlit = Object.assign(window.__streamlit || {}, "
          "{BACKEND_BASE_URL: window.location.origin + %s});</script>")


def with_backend(html: str, base_url: str | None) -> str:
    """index.html with the server's root declared before any script of Streamlit's runs."""
    root = "/" + (base_url or "").strip("/")
    return html.replace("<head>", "<head>" + SCRIPT % json.dumps(root), 1)


def _patch() -> None:
    from starlette.responses import FileResponse, HTMLResponse
    from streamlit.web.server.starlette import starlette_static_routes as routes

    create = routes.create_streamlit_static_handler

    def handler(directory: str, base_url: str | None):
        static = create(directory, base_url)
        get_response = static.get_response

        async def served(path, scope):
            response = await get_response(path, scope)
            if isinstance(response, FileResponse) and Path(response.path).name == "index.html":
                html = with_backend(Path(response.path).read_text(encoding="utf-8"), base_url)
                return HTMLResponse(html, status_code=response.status_code, headers={"Cache-Control": "no-cache"})
            return response

        static.get_response = served  # type: ignore[method-assign]
        return static

    routes.create_streamlit_static_handler = handler


def main() -> None:
    try:
        _patch()
    except (ImportError, AttributeError):
        pass  # another Streamlit: served as `streamlit run` serves it
    from streamlit.web.cli import main as streamlit_main

    sys.argv = ["streamlit", *sys.argv[1:]]
    streamlit_main()


if __name__ == "__main__":
    main()
