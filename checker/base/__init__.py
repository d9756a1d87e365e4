"""The bottom layer: what every other layer shares and which knows none of them: English/Spanish messages
(i18n), the terminal (term), where the data folders live (paths), kata's errors (errors), TOML files as typed
fields (toml), atomic writes (files)."""
