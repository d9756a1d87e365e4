"""Loop files as source: the protocol's functions (protocol), reading, compiling and loading a ``.py`` file
(loading), notebooks read as source and written as starters (notebook)."""
