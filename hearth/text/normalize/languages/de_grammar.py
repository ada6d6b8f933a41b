"""German grammar the numbers need: the ending of an ordinal ("der dritte Mai", "am dritten Mai",
"dritter Stock", "ein zweites Mal") from the word before it and the gender of the noun after it,
and that gender guessed from the noun ("1 Stunde" -> "eine Stunde", "1 Tag" -> "ein Tag").

The gender comes from the noun's last part (a compound's gender is its last word's: "Geburtstag"
is a "Tag") and its suffix ("-ung", "-heit", "-e" are mostly feminine); what neither tells is
masculine or neuter, which "ein" serves alike. A guess, documented: German has no rule that
settles every noun, and a wrong guess costs one ending."""

from __future__ import annotations

from hearth.text.normalize.language import word_set

__all__ = ["DETERMINERS", "STARTERS", "determiner_ending", "gender", "inflect"]

# Compound tails (the last word of a compound) with their gender; a tail also counts at the end of
# a longer word ("Mahlzeit", "Autobahn", "Feiertag"), but those of _WHOLE only alone ("Motor" is
# no "Tor").
_TAILS: dict[str, str] = {
    # feminine nouns that neither end in -e nor carry a feminine suffix
    **dict.fromkeys(
        ["zeit", "nacht", "frau", "stadt", "bahn", "zahl", "wahl", "welt", "fahrt", "kraft", "nachricht", "antwort",
         "person", "mail", "tür", "uhr", "maus", "bank", "burg", "post", "wurst", "milch", "nummer", "mutter",
         "tochter", "schwester", "regel", "form", "schicht", "pflicht", "sicht", "flucht", "kunst", "angst", "luft",
         "schrift", "macht", "schlacht", "sucht", "frucht", "gabel", "insel", "nadel", "tafel", "kugel", "feder",
         "liga", "firma", "kamera", "pizza", "oma", "hand", "art", "app", "wand", "nuss", "brust", "haut", "not",
         "tat", "saat", "stirn", "mark", "front", "fracht", "lust", "wut", "flut", "glut", "mauer", "feier",
         "butter", "steuer", "trauer", "dauer", "schulter", "ader", "faser", "kammer", "klammer",
         "kost", "heimat", "arbeit", "zeitschrift", "jagd", "geburt", "ankunft", "zukunft", "auskunft", "vernunft"],
        "f"),
    # masculine and neuter nouns in -e, which would be taken for feminine
    **dict.fromkeys(["name", "junge", "gedanke", "glaube", "buchstabe", "käse", "affe", "löwe", "hase", "friede",
                     "wille", "same", "funke", "experte", "kollege", "franzose", "kunde", "rabe", "bote", "neffe"],
                    "m"),
    **dict.fromkeys(["ende", "auge", "erbe", "interesse", "gebäude", "gemüse", "getränke", "finale", "image",
                     "prestige", "genre", "wochenende", "jahresende", "lebensende", "kriegsende"], "n"),
    # nouns ordinals often count, masculine and neuter (strong endings "dritter" / "drittes")
    **dict.fromkeys(["tag", "platz", "stock", "preis", "monat", "versuch", "rang", "krieg", "weltkrieg", "teil",
                     "schritt", "satz", "band", "lauf", "zug", "gang", "punkt", "sieg", "abschnitt", "advent",
                     "kurs", "film", "titel", "artikel", "paragraf", "paragraph", "geburtstag", "jahrestag",
                     "spieltag", "durchgang", "anlauf", "bezirk", "grad", "akt", "weg", "mann", "sohn", "vater",
                     "bruder", "euro", "dollar", "franken", "cent", "stern", "ton", "schuss", "wurf", "anruf",
                     "termin", "fall", "ort", "raum", "kreis", "verein", "block", "zyklus", "januar", "februar",
                     "märz", "april", "mai", "juni", "juli", "august", "september", "oktober", "november",
                     "dezember"], "m"),
    **dict.fromkeys(["jahr", "mal", "spiel", "kapitel", "haus", "buch", "semester", "jahrhundert", "jahrtausend",
                     "jahrzehnt", "quartal", "level", "album", "programm", "rennen", "treffen", "stockwerk",
                     "geschoss", "obergeschoss", "zimmer", "tor", "viertel", "halbjahr", "heft", "kind", "land",
                     "stück", "bild", "wort", "lied", "konzert", "gebot", "gesetz", "mitglied", "auto", "ziel",
                     "glas", "ei", "prozent", "gramm", "pfund", "bier", "problem",
                     "thema", "system", "mädchen", "team", "projekt", "angebot", "paket", "foto", "video", "wasser",
                     "fenster", "messer", "theater", "feuer", "ufer", "opfer", "muster", "wetter", "lager", "alter",
                     "zentrum", "kilo"], "n"),
}
_WHOLE = frozenset({"tor", "art", "ei", "tat", "wand", "ton", "not", "band", "teil"})
_SUFFIXES = (("ung", "f"), ("heit", "f"), ("keit", "f"), ("schaft", "f"), ("ion", "f"), ("tät", "f"),
             ("enz", "f"), ("anz", "f"), ("ei", "f"), ("ie", "f"), ("ik", "f"), ("ur", "f"), ("erin", "f"),
             ("istin", "f"),
             ("chen", "n"), ("lein", "n"), ("ment", "n"), ("um", "n"), ("tum", "n"), ("nis", "n"),
             ("ling", "m"), ("ismus", "m"), ("ist", "m"), ("or", "m"), ("e", "f"),
             ("er", "m"))  # most nouns in -er name who does something ("Sieger", "Fahrer")


def gender(noun: str) -> str | None:
    """The noun's gender, "m", "f" or "n", as guessed (None: nothing tells)."""
    word = noun.lower().rstrip(".")
    if word in _TAILS:
        return _TAILS[word]
    for size in range(len(word) - 1, 2, -1):  # the longest known tail first
        tail = word[-size:]
        if tail in _TAILS and tail not in _WHOLE:
            return _TAILS[tail]
    for suffix, found in _SUFFIXES:
        if word.endswith(suffix) and len(word) > len(suffix) + 1:
            return found
    return None


# Words before an ordinal, by the ending they give it: after the definite article in the
# nominative "-e" ("der dritte"), in the other cases and after "am", "im", "zum" "-en"; after "ein"
# the noun's gender decides ("ein dritter Versuch", "ein drittes Mal").
_WEAK_E = {"der", "die", "das", "ins", "ans", "aufs", "fürs", "ums", "übers", "durchs", "diese", "dieser",
           "dieses", "jede", "jeder", "jedes", "jene", "jener", "jenes", "eine", "keine", "meine", "deine",
           "seine", "ihre", "unsere", "eure"}
_WEAK_EN = {"dem", "den", "des", "am", "im", "vom", "zum", "zur", "beim", "hinterm", "unterm", "vorm", "überm",
            "einem", "einen", "einer", "eines", "keinem", "keinen", "keiner", "keines", "diesem", "diesen",
            "jedem", "jeden", "meinem", "meinen", "meiner", "meines", "seinem", "seinen", "seiner", "seines",
            "ihrem", "ihren", "ihrer", "ihres", "unserem", "unseren", "unserer", "unseres"}
_MIXED = {"ein", "kein", "mein", "dein", "sein", "ihr", "unser", "euer"}
DETERMINERS = frozenset(_WEAK_E | _WEAK_EN | _MIXED)


def determiner_ending(det: str | None, noun_gender: str | None) -> str:
    """The ordinal's ending after `det` (None: no determiner, the strong ending of the noun's
    gender; "-e" when the gender is unknown, the ending of the feminine and of the plural)."""
    word = (det or "").lower()
    if word in _WEAK_E:
        return "e"
    if word in _WEAK_EN:
        return "en"
    if word in _MIXED or not word:
        return {"m": "er", "n": "es"}.get(noun_gender or "", "er" if word else "e")
    return "e"


def inflect(ordinal: str, ending: str) -> str:
    """num2words' ordinal ("dritte") with another ending ("dritten", "dritter")."""
    return ordinal[:-1] + ending if ordinal.endswith("e") else ordinal + ending


# Words that start a sentence, and so show that a number's full stop before them ended one ("Es
# sind 42. Dann ...") rather than made it an ordinal ("am 3. Mai", "der 3. Stock").
_STARTERS = (
    "Der Die Das Dem Den Des Ein Eine Einer Ich Du Er Sie Es Wir Ihr Man Und Aber Oder Doch Dann Danach Da "
    "Dort Hier Heute Gestern Jetzt Nun Auch Also Denn So Wenn Als Weil Dass Ob Wie Was Wer Wo Warum Wann "
    "Bitte Nein Ja Im Am In Auf Mit Nach Bei Von Vom Zu Zum Zur Für Um Über Unter Vor Seit Ab Bis Dies Diese "
    "Dieser Dieses Mein Meine Sein Seine Ihre Unser Unsere Kein Keine Nicht Noch Schon Immer Alle Viele Mehr "
    "Insgesamt Damit Deshalb Daher Trotzdem Außerdem Zudem Leider Vielleicht Später Zuerst Anschließend "
    "Schließlich Übrigens Sonst Dabei Dazu Dafür Darum Somit Allerdings Jedoch Zum Beim")
STARTERS = word_set(_STARTERS)
