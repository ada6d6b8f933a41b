"""The languages of the text front end, one module each (see hearth/text/normalize/language.py)."""
