"""warplint's rules, one per file. Installed as the package ``warplint.rules``.

Adding a rule: add ``rules/wcNNN_kebab_name.py`` with one ``warplint.rule.Rule``
subclass and ``tests/fixtures/WCNNN.py`` with its expectations; nothing else.
"""
