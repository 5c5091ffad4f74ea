"""``tlite serve``: an interactive inspector in the browser for trained runs (FastAPI).

``registry`` finds and loads runs, ``views`` turns a run and a request into JSON (no web framework in
it, tested directly), ``app`` is the FastAPI application, ``hosts`` decides which requests it answers
(its own host only), and ``static/`` the page (plain HTML, CSS and JavaScript, no build step, nothing
fetched from the network).
"""
