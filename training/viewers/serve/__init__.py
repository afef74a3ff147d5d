"""``whist serve``: a table in the browser, where people play each other and the project's agents.

=============  ======================================================================================
module         what it holds
=============  ======================================================================================
``table``      the table model: the env, who sits where, moves checked and applied, each seat's log,
               the game record
``seat_view``  what one seat sees (from its observation and information state only), event texts
``analysis``   pimc's values at a person's decision; after a hand, double-dummy card values and a
               learned seat's action probabilities
``host``       the table in time (asyncio): waits for people, the timeout and fallback, agents and
               analysis in threads, messages to each seat's browsers
``app``        the web app (Starlette): pages, assets, websockets, the token and origin checks
``command``    the command: arguments in, links printed, uvicorn run
``assets/``    the page (``table.html``, ``table.css``, ``table.js``), package data; it draws with the
               replay page's ``replay.js`` and ``replay.css``
=============  ======================================================================================
"""
