"""Moved (issue 34): the Spanish help of every command and option, and click's own words in Spanish, are now
data: the gettext catalogue ``checker/locale/es/LC_MESSAGES/kata.po`` (compile it after an edit:
``python .ci/compile_texts.py``). ``checker/cli/texts.py`` reads it when `kata` starts. A new option's Spanish
help is an entry there: ``msgctxt "kata COMMAND --OPTION"``, ``msgid`` its English help, ``msgstr`` the Spanish.
"""
