"""Viewers: what people look at.

==========  ======================================================================================
module      what it holds
==========  ======================================================================================
``plots``   ``whist plot``: PNG figures (win-rate heat map, ratings, learning curve, bid accuracy)
``replay``  ``whist replay``: one self-contained HTML page stepping through a game record; its
            HTML, CSS and JavaScript are package data in ``assets/``
``play``    ``whist play``: a person plays in the terminal against agents
``serve``   ``whist serve``: a table in the browser, people and agents, analysis on request (the
            optional extra ``serve``); its page draws with the replay page's assets
==========  ======================================================================================
"""
