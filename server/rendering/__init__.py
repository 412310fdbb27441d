"""What the pages are made of: the Jinja templates, Markdown with highlighted code, the interface strings, charts, the intro."""
