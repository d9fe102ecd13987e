"""The web app (``discogym serve``, extra ``web``): play tasks in the browser, and browse runs."""
