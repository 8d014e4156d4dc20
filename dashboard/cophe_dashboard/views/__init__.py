"""The dashboard's pages, one module each; ``show()`` draws the page."""
